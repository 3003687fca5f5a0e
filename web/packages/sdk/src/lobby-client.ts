import {
  ErrorCode,
  MAX_SPECTATOR_DATA,
  VERSION,
  encodeFrame,
  type Ice,
  type MessageMap,
  type MessageTypeName,
  type PartyJoined,
  type RoomJoined,
  type RoomSummary,
  type SignalKindName,
  type Spectating,
} from '@hostrelay/protocol';
import { Emitter, type Unsubscribe } from './emitter.js';
import { LobbyError } from './errors.js';
import { Connection } from './lobby/connection.js';
import { LobbyCore } from './lobby/core.js';
import type { LobbyEvents } from './lobby/events.js';
import { Moves } from './lobby/moves.js';
import { Resume } from './lobby/resume.js';
import { backoff, type ReconnectPolicy } from './reconnect.js';
import { webSocketTransport, type TransportFactory } from './transport.js';

export type { LobbyEvents, NodeMove } from './lobby/events.js';

export interface LobbyClientOptions {
  /** How frames travel; defaults to a browser WebSocket. */
  transport?: TransportFactory;
  /** How long connect waits for the socket and the welcome (ms). */
  connectTimeoutMs?: number;
  /** How long a request waits for its reply (ms). */
  requestTimeoutMs?: number;
  /**
   * A random id this client keeps across connections (16–64 of A–Z a–z 0–9 - _).
   * A room the host kicks us from bans it, so a reload does not get us back in.
   */
  device?: string;
  /** Ask for a playerUpdated event whenever a member's ping changes. */
  pings?: boolean;
  /**
   * Take the seat back when the connection drops (default false): the server
   * holds it for a grace period, and a new connection resumes it with every
   * frame missed meanwhile. Rooms, requests in flight and peer connections
   * carry on; 'reconnecting' and 'resumed' tell the page. Only when the seat
   * cannot be had back does 'close' fire.
   */
  resume?: boolean;
  /** When to try again while resuming (default: 250 ms doubling to 2 s). */
  resumePolicy?: ReconnectPolicy;
  /**
   * An identity token (a JWT) from the game's backend, sent in hello: on a
   * server with -auth on, a valid one makes us a verified player
   * (Player.verified, Player.userId). See docs/identity.md.
   */
  token?: string;
  /**
   * Fetches a fresh token from the game's backend: called for the first
   * hello when `token` is not given, and before every resume and move to
   * another node, so an expired token never costs the seat. Without it a
   * resume sends no token and the server keeps the identity it verified.
   */
  getToken?: () => Promise<string>;
}

export interface CreateRoomOptions {
  name: string;
  maxPlayers: number;
  public: boolean;
  password?: string;
  /** A game-mode label shown in the room list. */
  mode?: string;
  /**
   * When the host leaves, promote the longest-present member instead of
   * closing the room (default false). RoomSession then re-forms the star
   * around the new host and says so with 'hostChanged'.
   */
  migrate?: boolean;
  /**
   * In a cluster, the region to host the room in (see regionProblem): a
   * node elsewhere sends us to one that is there, which the client follows
   * ('moved'). A region with no live node is ignored: the room is made on
   * the node we are on. A single node ignores it.
   */
  region?: string;
  /**
   * Admit verified players only (an identity token, see docs/identity.md);
   * others get members_only. Only a verified player may ask.
   */
  membersOnly?: boolean;
}

export interface QuickPlayOptions {
  /** The size of the room made when none has a seat (default: the server's, 8). */
  maxPlayers?: number;
  /** Whether that room promotes a member when its host leaves (see CreateRoomOptions.migrate). */
  migrate?: boolean;
}

/** New room settings (host only). The password changes only if `password` is given ('' removes it). */
export interface RoomSettings {
  name: string;
  maxPlayers: number;
  public: boolean;
  mode?: string;
  password?: string;
}

/** How a host's kick treats the player afterwards. */
export interface KickOptions {
  /**
   * Ban the player's verified user id from the room for the room's life: no
   * session of that user (any name, any device) may rejoin, and its
   * `joinRoom` answers `banned`. For an unverified player it changes only the
   * code its rejoin gets: every kick bans the session and device.
   */
  ban?: boolean;
}

/** A signal as the sender writes it; the server fills in `from`. */
export interface OutgoingSignal {
  to: string;
  kind: SignalKindName;
  sdp?: string;
  cand?: string;
  mid?: string;
}

/**
 * One lobby session over a WebSocket: requests correlated by id, each with a
 * timeout, and the server's room events. Its parts are in lobby/:
 * connection.ts (dial, requests), core.ts (the state, incoming frames),
 * resume.ts (after a drop), moves.ts (room_elsewhere) and events.ts (the
 * server's events as LobbyEvents).
 */
export class LobbyClient {
  private readonly events = new Emitter<LobbyEvents>();
  private readonly core: LobbyCore;
  private readonly moves: Moves;
  private currentName: string;

  private constructor(url: string, name: string, options: LobbyClientOptions) {
    this.currentName = name;
    const connection = new Connection(
      options.transport ?? webSocketTransport,
      options.connectTimeoutMs ?? 10_000,
      options.requestTimeoutMs ?? 10_000,
    );
    this.core = new LobbyCore(url, connection, this.events);
    this.token = options.token ?? '';
    const getToken = options.getToken;
    // A fresh token for a resume or a move, when the page can fetch one.
    const freshToken = getToken
      ? async (): Promise<string> => {
          this.token = await getToken();
          return this.token;
        }
      : null;
    const resume = new Resume(
      this.core,
      options.resume === true,
      options.resumePolicy ?? backoff({ initialMs: 250, maxMs: 2_000 }),
      freshToken,
    );
    this.core.onDrop = (code, reason) => resume.dropped(code, reason);
    this.moves = new Moves(
      this.core,
      () => ({ name: this.currentName, device: options.device, pings: options.pings, token: this.token }),
      freshToken,
    );
  }

  /** The identity token the last hello carried ('' for none). */
  private token: string;

  /**
   * Opens the connection and says hello; resolves once the server welcomed us.
   * `name` may be '' to browse rooms first: creating or joining then needs setName.
   */
  static async connect(url: string, name: string, options: LobbyClientOptions = {}): Promise<LobbyClient> {
    const client = new LobbyClient(url, name, options);
    const core = client.core;
    if (client.token === '' && options.getToken) client.token = await options.getToken();
    await core.dial(url, 'current');
    try {
      const token = client.token === '' ? undefined : client.token;
      const welcome = await core.request('hello', { v: VERSION, name, device: options.device, pings: options.pings, token }, 'welcome');
      core.session = welcome.session;
      core.noteWelcome(welcome);
    } catch (err) {
      client.close();
      throw err;
    }
    return client;
  }

  /** Our name as we last set it (a room may show it with a " (2)" suffix). */
  get name(): string {
    return this.currentName;
  }

  /** The lobby session id the server assigned (it appears in TURN usernames and logs). */
  get session(): string {
    return this.core.session;
  }

  /** True while the connection is up (false while resuming); a move to another node counts as up. */
  get connected(): boolean {
    return this.core.state.kind === 'open' || this.core.state.kind === 'moving';
  }

  /** The lobby WebSocket URL this client is connected to: the one it was made with until a 'moved'. */
  get url(): string {
    return this.core.url;
  }

  /** The id of the cluster node we are on, from its Welcome ('' on a single node). */
  get node(): string {
    return this.core.node;
  }

  /** The region of the node we are on ('' on a single node or a node without one). */
  get region(): string {
    return this.core.region;
  }

  /**
   * TURN credentials the server gave this session with its Welcome, while
   * less than half their lifetime is gone; null otherwise (or from a server
   * that sends none). A client about to join can start gathering relay
   * candidates with them before the join's reply; they relay nothing until
   * the session is in a room. A move to another node replaces them.
   */
  get welcomeIceServers(): Ice | null {
    const w = this.core.welcomeIce;
    if (w === null || w.ice.servers.length === 0) return null;
    return Date.now() - w.at < (w.ice.ttl * 1000) / 2 ? w.ice : null;
  }

  on<K extends keyof LobbyEvents>(event: K, listener: (...args: LobbyEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  /** Creates a room with this client as its host. */
  createRoom(options: CreateRoomOptions): Promise<RoomJoined> {
    return this.call(
      'createRoom',
      {
        name: options.name,
        maxPlayers: options.maxPlayers,
        public: options.public,
        password: options.password,
        mode: options.mode,
        migrate: options.migrate,
        region: options.region,
        membersOnly: options.membersOnly,
      },
      'roomJoined',
    );
  }

  /** Joins a room by its code; a wrong or missing password rejects with code 'wrong_password'. */
  joinRoom(code: string, password?: string): Promise<RoomJoined> {
    return this.call('joinRoom', { code, password }, 'roomJoined');
  }

  /**
   * Play now: a seat in the fullest open public room of `mode`, or a new
   * public room of that mode with us as host. In a party only the leader may
   * call it ('forbidden' otherwise), and the whole party comes along: the
   * other members get a 'roomJoined' event.
   */
  quickPlay(mode: string, options: QuickPlayOptions = {}): Promise<RoomJoined> {
    return this.call('quickPlay', { mode, maxPlayers: options.maxPlayers, migrate: options.migrate }, 'roomJoined');
  }

  /** Makes a party with us as its leader; share its code (at most MAX_PARTY_SIZE members). */
  createParty(): Promise<PartyJoined> {
    return this.call('createParty', undefined, 'partyJoined');
  }

  /** Joins a friend's party by its code ('party_not_found', 'party_full', 'already_in_party'). */
  joinParty(code: string): Promise<PartyJoined> {
    return this.call('joinParty', { code }, 'partyJoined');
  }

  async leaveParty(): Promise<void> {
    await this.call('leaveParty', undefined, 'ok');
  }

  async leaveRoom(): Promise<void> {
    await this.call('leaveRoom', undefined, 'ok');
  }

  /** Relays WebRTC negotiation to another member (clients may signal only the host). */
  async sendSignal(signal: OutgoingSignal): Promise<void> {
    await this.call('signal', signal, 'ok');
  }

  /**
   * Tells the server that `host`, our room's host, has sent nothing on the
   * game channel for a while. RoomSession does it by itself (hostSilenceMs);
   * the server counts one report per player, at most one a second
   * ('rate_limited' past it), and checks on the host once most of the room
   * reported (docs/protocol.md, Frozen hosts).
   */
  async reportHostSilent(host: string): Promise<void> {
    await this.call('hostSilent', { host }, 'ok');
  }

  /** Changes our name; in a room everyone hears playerUpdated. */
  async setName(name: string): Promise<void> {
    await this.call('setName', { name }, 'ok');
    this.currentName = name.trim();
  }

  /** Marks us ready (or not) to start. */
  async setReady(ready: boolean): Promise<void> {
    await this.call('setReady', { ready }, 'ok');
  }

  /** Replaces the room's settings (host only; others get 'forbidden'). */
  async updateRoom(settings: RoomSettings): Promise<void> {
    const { password, ...rest } = settings;
    await this.call('updateRoom', { ...rest, password, setPassword: password !== undefined }, 'ok');
  }

  /**
   * Removes a player and bans its session and device from the room (host
   * only). With `ban`, its verified user id too: no session of that user may
   * rejoin (`banned`).
   */
  async kick(playerId: string, options: KickOptions = {}): Promise<void> {
    await this.call('kick', { id: playerId, ban: options.ban === true }, 'ok');
  }

  /** Starts the game once everyone else is ready (host only; 'not_ready' otherwise). */
  async startGame(): Promise<void> {
    await this.call('startGame', undefined, 'ok');
  }

  /** Sends a chat line to the room; it comes back as a chatMessage event. */
  async sendChat(text: string): Promise<void> {
    await this.call('chat', { text }, 'ok');
  }

  /**
   * Subscribes to the public room list: resolves with the first rooms, then
   * roomListUpdate events bring the rest and every change. RoomDirectory
   * keeps the list for you.
   */
  async watchRooms(): Promise<RoomSummary[]> {
    return (await this.call('watchRooms', undefined, 'roomList')).rooms;
  }

  async unwatchRooms(): Promise<void> {
    await this.call('unwatchRooms', undefined, 'ok');
  }

  /**
   * Watches a room without a seat (it may be full or started): resolves with
   * the room and the server's delay, then 'spectatorFrame' events bring the
   * host's stream that far behind the players. SpectatorSession wraps this.
   */
  spectate(code: string, password?: string): Promise<Spectating> {
    return this.call('spectate', { code, password }, 'spectating');
  }

  /** Stops watching ('not_in_room' if we were not). */
  async stopSpectating(): Promise<void> {
    await this.call('stopSpectating', undefined, 'ok');
  }

  /**
   * The most bytes of data one spectator frame may carry on this server:
   * MAX_SPECTATOR_DATA, or less if the server's frame limit is lower.
   */
  get maxSpectatorData(): number {
    const maxFrame = this.core.maxFrame;
    return maxFrame > 0 ? Math.min(MAX_SPECTATOR_DATA, maxFrame - 64) : MAX_SPECTATOR_DATA;
  }

  /**
   * Sends one frame of the room's spectator stream (host only). It is not
   * answered (id 0): the server fans it out to every spectator after its
   * delay, and a refusal (past the room's rate, say) comes as an 'error'
   * event. RoomSession.sendSpectatorFrame checks the limits first.
   */
  sendSpectatorFrame(data: Uint8Array, key: boolean): void {
    if (data.length === 0 || data.length > this.maxSpectatorData) {
      throw new LobbyError(
        ErrorCode.InvalidArgument,
        `spectatorFrame: data is ${data.length} bytes; it must be 1 to ${this.maxSpectatorData}`,
      );
    }
    const transport = this.core.live;
    // A frame for spectators is worth nothing later: while resuming, skip it.
    if (transport === null) return;
    transport.send(encodeFrame('spectatorFrame', 0, { key, data }));
  }

  /** Closes the connection and ends the session; pending requests reject with code 'closed'. */
  close(): void {
    this.core.close();
  }

  /** Sends a request, following room_elsewhere to the node it names (lobby/moves.ts). */
  private call<T extends MessageTypeName, R extends MessageTypeName>(
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
  ): Promise<MessageMap[R]> {
    return this.moves.call(type, body, expect);
  }
}
