import { ErrorCode, Reason, type CloseReason, type RoomSummary, type SpectatorFrame } from '@hostrelay/protocol';
import { Emitter, type Unsubscribe } from './emitter.js';
import type { LobbyClient } from './lobby-client.js';

/** Why watching ended: a room close reason, 'joined', 'stopped', or one a newer server sends. */
export type SpectateEndReason = CloseReason | 'joined' | 'stopped' | (string & {});

/** Frames kept for a session nobody listens to yet (the server's own per-spectator bound). */
const MAX_HELD_FRAMES = 64;

export interface SpectatorSessionEvents {
  /**
   * One frame of the host's spectator stream, the server's delay behind the
   * players. `key` marks a complete state; the frames after it are deltas
   * against it. The first frame after watching (or after frames were lost
   * to a slow connection) is always a keyframe.
   */
  frame: [data: Uint8Array, info: { key: boolean }];
  /**
   * We no longer watch: the room closed ('host_left', 'operator_closed',
   * 'room_lost' with its node, …), we took a seat ('joined'), the lobby
   * connection closed ('disconnected'), or close() ('stopped').
   */
  ended: [reason: SpectateEndReason];
}

/**
 * Watching a room without a seat: no peer connection, no TURN, and no cost
 * to the host, whose one stream the server fans out over the lobby
 * WebSocket. A spectator may be in no room; joining one stops watching.
 */
export class SpectatorSession {
  private readonly events = new Emitter<SpectatorSessionEvents>();
  private readonly offs: Unsubscribe[];
  private endedReason: SpectateEndReason | null = null;
  private frameCount = 0;
  private listening = false;

  /** Watches the room with this code ('room_not_found', 'wrong_password', 'room_full' past its spectator seats). */
  static async watch(lobby: LobbyClient, code: string, password?: string): Promise<SpectatorSession> {
    // Listen before asking: the server sends the last keyframe right after
    // the reply, and a listener added after the await could miss it.
    const early: SpectatorFrame[] = [];
    const off = lobby.on('spectatorFrame', (f) => early.push(f));
    try {
      const reply = await lobby.spectate(code, password);
      return new SpectatorSession(lobby, reply.room, reply.delayMs, early);
    } finally {
      off();
    }
  }

  private constructor(
    private readonly lobby: LobbyClient,
    /** The room as the room list showed it when we started watching. */
    readonly room: RoomSummary,
    /** How far behind the players the server holds the stream (ms). */
    readonly delayMs: number,
    // Frames that came before anyone could listen: held for the first
    // 'frame' listener, since the first of them is the keyframe.
    private held: SpectatorFrame[],
  ) {
    this.offs = [
      lobby.on('spectatorFrame', (f) => this.onFrame(f)),
      lobby.on('spectateEnded', (e) => this.end(e.reason || 'host_left')),
      lobby.on('roomJoined', () => this.end('joined')),
      lobby.on('close', ({ error }) => this.end(error?.code === ErrorCode.RoomLost ? Reason.RoomLost : Reason.Disconnect)),
    ];
  }

  on<K extends keyof SpectatorSessionEvents>(event: K, listener: (...args: SpectatorSessionEvents[K]) => void): Unsubscribe {
    const off = this.events.on(event, listener);
    if (event === 'frame' && !this.listening) {
      this.listening = true;
      // After the caller's synchronous setup, so it may subscribe to 'ended' too.
      if (this.held.length > 0) queueMicrotask(() => this.flushHeld());
    }
    return off;
  }

  /** Frames received so far. */
  get frames(): number {
    return this.frameCount;
  }

  /** Why watching ended, or null while it goes on. */
  get ended(): SpectateEndReason | null {
    return this.endedReason;
  }

  /** Stops watching. Idempotent; 'ended' fires with 'stopped'. */
  close(): void {
    if (this.endedReason !== null) return;
    this.end('stopped');
    // The lobby may have closed meanwhile: nothing to stop then.
    if (this.lobby.connected) this.lobby.stopSpectating().catch(() => undefined);
  }

  private flushHeld(): void {
    const held = this.held;
    this.held = [];
    for (const f of held) this.deliver(f);
  }

  private onFrame(f: SpectatorFrame): void {
    if (!this.listening || this.held.length > 0) {
      // Nobody listening must not grow memory without end: past the bound,
      // keep only what follows the next keyframe (deltas alone are useless).
      if (this.held.length >= MAX_HELD_FRAMES) this.held = [];
      if (this.held.length > 0 || f.key) this.held.push(f);
      return;
    }
    this.deliver(f);
  }

  private deliver(f: SpectatorFrame): void {
    if (this.endedReason !== null) return;
    this.frameCount++;
    this.events.emit('frame', f.data, { key: f.key });
  }

  private end(reason: SpectateEndReason): void {
    if (this.endedReason !== null) return;
    this.endedReason = reason;
    for (const off of this.offs) off();
    this.events.emit('ended', reason);
    this.events.clear();
  }
}
