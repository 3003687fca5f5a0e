import type { WatchedArena } from '@hostrelay/game-arena';
import { LobbyError, SpectatorSession, type LobbyClient } from '@hostrelay/sdk';
import { ui } from './dom';
import type { Store } from './state';

// Watching a room as a spectator: no seat, no name, no peer connection. The
// server hands us the host's spectator stream its delay behind the players;
// the arena draws it. Other games have no spectator view yet.

/** The game modes with a spectator view. */
const WATCHABLE = new Set(['Arena']);

export class WatchController {
  private spectator: SpectatorSession | null = null;
  private view: WatchedArena | null = null;
  private code: string | null = null;

  constructor(private readonly store: Store) {}

  /** Whether a room of this mode can be watched here. */
  static canWatch(mode: string): boolean {
    return WATCHABLE.has(mode);
  }

  /** The code being watched (or about to be), null when not watching. */
  get watching(): string | null {
    return this.code;
  }

  /** Starts (or, on a new connection, restarts) watching `code`. */
  async watch(client: LobbyClient, code: string): Promise<void> {
    this.code = code;
    this.teardown();
    this.store.update({ phase: 'watch' });
    ui.watchStatus.textContent = 'Connecting…';
    let spectator: SpectatorSession;
    try {
      spectator = await SpectatorSession.watch(client, code);
    } catch (err) {
      if (this.code !== code) return;
      this.code = null;
      const e = err instanceof LobbyError ? err : new LobbyError('internal', String(err));
      this.store.update({ phase: 'error', error: { code: e.code, message: e.message } });
      return;
    }
    if (this.code !== code) {
      spectator.close();
      return;
    }
    this.spectator = spectator;
    const { room, delayMs } = spectator;
    ui.watchRoom.textContent = room.name;
    this.store.update({ watching: { code, name: room.name, mode: room.mode, delayMs } });
    const behind = `${Math.round(delayMs / 100) / 10} s behind`;
    let over = false;
    spectator.on('ended', (reason) => {
      if (reason === 'stopped' || reason === 'disconnected') return; // ours, or the link redials and watches again
      over = true;
      ui.watchStatus.textContent =
        reason === 'host_left'
          ? 'The host left: the game is over.'
          : reason === 'room_lost'
            ? 'The server hosting the game stopped: the game is over.'
            : `The game ended (${reason}).`;
    });
    if (!WatchController.canWatch(room.mode)) {
      ui.watchStatus.textContent = `${room.mode || 'This game'} has no spectator view.`;
    } else {
      ui.watchStatus.textContent = `Watching · ${behind} · waiting for the host…`;
      // The arena's code is a chunk of its own, fetched when someone watches.
      let watchArena: typeof import('@hostrelay/game-arena').watchArena;
      try {
        ({ watchArena } = await import('@hostrelay/game-arena'));
      } catch (err) {
        if (this.spectator === spectator) ui.watchStatus.textContent = `The game could not be loaded (${String(err)}): reload the page.`;
        return;
      }
      // Stopped, watching another room, or the game ended, meanwhile.
      if (this.spectator !== spectator || over) return;
      this.view = watchArena({ spectator, container: ui.watchGame });
      const off = spectator.on('frame', () => {
        ui.watchStatus.textContent = `Watching · ${behind}`;
        off();
      });
    }
  }

  stop(): void {
    this.code = null;
    this.teardown();
    this.store.update({ watching: null });
  }

  private teardown(): void {
    this.view?.stop();
    this.view = null;
    this.spectator?.close();
    this.spectator = null;
  }
}
