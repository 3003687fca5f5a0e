import {
  RoomSession,
  type ChatMessage,
  type CreateRoomOptions,
  type LobbyClient,
  type Player,
  type RoomEndReason,
  type RoomInfo,
  type RoomSessionOptions,
} from '@hostrelay/sdk';
import { createContext, createElement, useContext, useEffect, useMemo, useRef, type ReactNode } from 'react';
import { useLobbyContext } from './lobby.js';
import { Resource, useResource } from './resource.js';

/**
 * Where this tab stands in the room: 'idle' (no room asked for, or no
 * open lobby: a lobby that closes takes the room with it, and its
 * LobbyState says why), 'joining' (the create or join is on its way), 'connecting'
 * (in the room, a client whose data channels to the host are not open
 * yet), 'open' (a host in its room, or a client linked to its host),
 * 'reconnecting' (the lobby connection dropped and is being resumed),
 * 'closed' (see `closedReason` and `error`).
 */
export type RoomConnection = 'idle' | 'joining' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** What useRoom returns; a new object whenever anything in it changes. */
export interface RoomState {
  readonly connection: RoomConnection;
  /** The SDK's session once in the room (and after it ended), for what the hooks do not cover. */
  readonly session: RoomSession | null;
  /** The room's code, name, settings and whether it started, as last heard. */
  readonly room: RoomInfo | null;
  /** Everyone in the room, oldest first, this tab included. */
  readonly players: readonly Player[];
  /** This tab's player. */
  readonly me: Player | null;
  /** The room's host (it changes when a room made with `migrate` loses its host). */
  readonly host: Player | null;
  readonly isHost: boolean;
  /** The host started the game. */
  readonly started: boolean;
  /** The room's last chat lines, oldest first. Plain text: render it as text. */
  readonly chat: readonly ChatMessage[];
  /** Peers whose data channels are open: the clients for a host, the host for a client. */
  readonly openPeers: readonly string[];
  /** Why the session ended, once 'closed' ('left', 'kicked', 'host_left', 'disconnected', …). */
  readonly closedReason: RoomEndReason | null;
  /** Why the create or join failed (a LobbyError: 'room_not_found', 'wrong_password', 'room_full', …), or the last peer error. */
  readonly error: Error | null;
}

/** A room to join by its code, or one to create (and host). */
export type RoomTarget = string | CreateRoomOptions;

export interface UseRoomOptions {
  /** The lobby connection to use; by default the LobbyProvider's. */
  lobby?: LobbyClient | null;
  /** The password of a room joined by code. */
  password?: string;
  /** RoomSession's options, read when the session starts. */
  session?: RoomSessionOptions;
}

const IDLE: RoomState = {
  connection: 'idle',
  session: null,
  room: null,
  players: [],
  me: null,
  host: null,
  isHost: false,
  started: false,
  chat: [],
  openPeers: [],
  closedReason: null,
  error: null,
};
const JOINING: RoomState = { ...IDLE, connection: 'joining' };

/**
 * One room session: created or joined when first retained, left when
 * released. A lobby is in one room at a time, so a store for the next room
 * (`previous` is the one before it on the same component) joins only after
 * the previous one has left.
 */
class RoomStore extends Resource<RoomState> {
  private generation = 0;
  private session: RoomSession | null = null;
  private offs: (() => void)[] = [];
  private error: Error | null = null;
  private closedReason: RoomEndReason | null = null;
  /** Settles with the session of the last open() (or null if it failed or was abandoned). */
  private joined: Promise<RoomSession | null> = Promise.resolve(null);
  /** Settles once the session of the last open(), if any, has left the room after close(). */
  private left: Promise<void> = Promise.resolve();
  private leftNow: (() => void) | null = null;

  constructor(
    private readonly lobby: LobbyClient,
    private readonly target: RoomTarget,
    private readonly options: UseRoomOptions,
    private readonly previous: RoomStore | null,
  ) {
    super(JOINING);
  }

  protected open(): void {
    const generation = ++this.generation;
    this.error = null;
    this.closedReason = null;
    this.publish(JOINING);
    this.left = new Promise((resolve) => (this.leftNow = resolve));
    // The previous room's release closes it one task from now: wait for its leave.
    const after = this.previous?.left ?? Promise.resolve();
    this.joined = after
      .then(() => {
        if (generation !== this.generation) return null;
        const { target, lobby, options } = this;
        return typeof target === 'string'
          ? RoomSession.join(lobby, target, options.password, options.session)
          : RoomSession.create(lobby, target, options.session);
      })
      .then(
        (session) => {
          if (session === null) return null;
          if (generation !== this.generation) return session; // close() leaves it
          this.attach(session);
          return session;
        },
        (err: unknown) => {
          if (generation === this.generation) {
            this.error = err instanceof Error ? err : new Error(String(err));
            this.publish({ ...IDLE, connection: 'closed', error: this.error });
          }
          return null;
        },
      );
  }

  protected close(): void {
    this.generation++;
    for (const off of this.offs.splice(0)) off();
    this.session = null;
    const leftNow = this.leftNow;
    this.leftNow = null;
    // A join still on its way is left as soon as it lands: no seat stays taken.
    void this.joined
      .then((session) => session?.leave())
      .catch(() => undefined)
      .then(() => leftNow?.());
  }

  private attach(session: RoomSession): void {
    this.session = session;
    const refresh = (): void => this.refresh();
    this.offs = [
      session.on('peerOpen', refresh),
      session.on('peerClose', refresh),
      session.on('playerJoined', refresh),
      session.on('playerLeft', refresh),
      session.on('playerUpdated', refresh),
      session.on('roomUpdated', refresh),
      session.on('gameStarted', refresh),
      session.on('chat', refresh),
      session.on('hostChanged', refresh),
      session.on('error', (err) => {
        this.error = err;
        refresh();
      }),
      session.on('closed', (reason) => {
        this.closedReason = reason;
        refresh();
      }),
      this.lobby.on('reconnecting', refresh),
      this.lobby.on('resumed', refresh),
    ];
    this.refresh();
  }

  /** A new snapshot from the session's getters (its arrays are replaced, never changed, on each event). */
  private refresh(): void {
    const s = this.session;
    if (s === null) return;
    const players = s.players;
    const openPeers = s.openPeers;
    const last = this.getSnapshot();
    const isHost = s.role === 'host';
    let connection: RoomConnection;
    if (s.closed) connection = 'closed';
    else if (!this.lobby.connected) connection = 'reconnecting';
    else if (isHost || openPeers.includes(s.hostId)) connection = 'open';
    else connection = 'connecting';
    this.publish({
      connection,
      session: s,
      room: s.room,
      players,
      me: s.me ?? null,
      host: players.find((p) => p.id === s.hostId) ?? null,
      isHost,
      started: s.started,
      chat: s.chat,
      // The same array while the peers are the same, so components can compare.
      openPeers: sameIds(last.openPeers, openPeers) ? last.openPeers : openPeers,
      closedReason: s.closed ? (this.closedReason ?? 'closed') : null,
      error: this.error,
    });
  }
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** A stable key for a target: a new key is a new room. */
function keyOf(target: RoomTarget | null): string | null {
  if (target === null) return null;
  return typeof target === 'string' ? `join ${target}` : `create ${JSON.stringify(target)}`;
}

/**
 * A room for this component's lifetime: joined by code (a string) or created
 * with this tab as host (CreateRoomOptions), after the first render, on the
 * LobbyProvider's lobby (or `options.lobby`) once it is open. Unmounting the
 * component, or a new target, leaves the room; a join still on its way when
 * that happens is left as soon as it lands. StrictMode's second effect keeps
 * the first one's join: one join, one seat. null asks for no room.
 *
 * A target object is compared by value, so an inline literal does not
 * rejoin on every render; `options` are read when the join starts.
 *
 * @example
 * const room = useRoom(code);
 * return <RoomProvider value={room}>{room.players.map((p) => <li key={p.id}>{p.name}</li>)}</RoomProvider>;
 */
export function useRoom(target: RoomTarget | null, options: UseRoomOptions = {}): RoomState {
  const fromContext = useLobbyContext().client;
  const lobby = options.lobby === undefined ? fromContext : options.lobby;
  const key = keyOf(target);
  const previous = useRef<RoomStore | null>(null);
  const store = useMemo(
    () => (lobby === null || target === null ? null : new RoomStore(lobby, target, options, previous.current)),
    // A new store for a new lobby connection or a new target (by value);
    // options are read once.
    [lobby, key],
  );
  useEffect(() => {
    if (store !== null) previous.current = store;
  }, [store]);
  return useResource(store, IDLE, JOINING);
}

const RoomContext = createContext<RoomState>(IDLE);

/** Hands a useRoom state to the components below: usePeerMessages, useNetHost and useNetClient use it. */
export function RoomProvider(props: { value: RoomState; children?: ReactNode }): ReactNode {
  return createElement(RoomContext.Provider, { value: props.value }, props.children);
}

/** The RoomState of the nearest RoomProvider ('idle' without one). */
export function useRoomContext(): RoomState {
  return useContext(RoomContext);
}
