import type { RoomListUpdate, RoomSummary } from '@hostrelay/protocol';
import { Emitter, type Unsubscribe } from './emitter.js';
import type { LobbyClient } from './lobby-client.js';

export interface RoomDirectoryEvents {
  /** The list changed; `rooms` is the whole list, newest room first as the server sent it. */
  change: [rooms: readonly RoomSummary[]];
}

/**
 * The public room list, kept up to date: the server sends it once, then only
 * what changed, and this applies each change. One directory per lobby
 * connection; creating or joining a room ends the server's watch. When the
 * client moves to another node of a cluster, the directory watches there
 * and replaces its list with that node's (every node lists every room).
 */
export class RoomDirectory {
  private readonly events = new Emitter<RoomDirectoryEvents>();
  private readonly byCode = new Map<string, RoomSummary>();
  private readonly offs: Unsubscribe[];
  private early: RoomListUpdate[] | null = [];
  private closed = false;

  private constructor(private readonly lobby: LobbyClient) {
    // Listen before asking: the rest of a long list follows the reply at once.
    this.offs = [
      lobby.on('roomListUpdate', (u) => {
        if (this.early) this.early.push(u);
        else this.apply(u);
      }),
      // The old node's watch ended with its connection.
      lobby.on('moved', () => void this.watchAgain()),
    ];
  }

  /** Subscribes and resolves once the first rooms are in. */
  static async watch(lobby: LobbyClient): Promise<RoomDirectory> {
    const dir = new RoomDirectory(lobby);
    try {
      const rooms = await lobby.watchRooms();
      for (const r of rooms) dir.byCode.set(r.code, r);
    } catch (err) {
      for (const off of dir.offs) off();
      throw err;
    }
    const early = dir.early ?? [];
    dir.early = null;
    for (const u of early) dir.apply(u, false);
    return dir;
  }

  /** Every listed room, in the order the server listed them. */
  get rooms(): readonly RoomSummary[] {
    return [...this.byCode.values()];
  }

  on<K extends keyof RoomDirectoryEvents>(event: K, listener: (...args: RoomDirectoryEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  /** Stops listening and, if the connection is still up, tells the server. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const off of this.offs) off();
    this.events.clear();
    if (this.lobby.connected) await this.lobby.unwatchRooms().catch(() => undefined);
  }

  private async watchAgain(): Promise<void> {
    if (this.closed) return;
    this.early = [];
    let rooms: RoomSummary[];
    try {
      rooms = await this.lobby.watchRooms();
    } catch {
      this.early = null;
      return; // the connection is gone: so is the list's use
    }
    if (this.closed) return;
    this.byCode.clear();
    for (const r of rooms) this.byCode.set(r.code, r);
    const early = this.early ?? [];
    this.early = null;
    for (const u of early) this.apply(u, false);
    this.events.emit('change', this.rooms);
  }

  private apply(u: RoomListUpdate, notify = true): void {
    for (const code of u.del) this.byCode.delete(code);
    for (const r of u.set) this.byCode.set(r.code, r);
    if (notify) this.events.emit('change', this.rooms);
  }
}
