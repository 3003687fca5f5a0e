import {
  ErrorCode,
  MAX_SPECTATOR_DATA,
  ProtocolError,
  VERSION,
  bodyOf,
  decodeFrame,
  encodeFrame,
  type ChatMessage,
  type Frame,
  type GameStarted,
  type HostChanged,
  type Ice,
  type MessageMap,
  type MessageTypeName,
  type Party,
  type PartyJoined,
  type Player,
  type PlayerLeft,
  type RoomClosed,
  type RoomInfo,
  type RoomJoined,
  type RoomListUpdate,
  type RoomSummary,
  type Signal,
  type SignalKindName,
  type SpectateEnded,
  type Spectating,
  type SpectatorFrame,
  type Welcome,
} from '@hostrelay/protocol';
import { Emitter, type Unsubscribe } from './emitter.js';
import { ClientErrorCode, LobbyError, RoomElsewhereError, lobbyErrorFrom } from './errors.js';
import { NodeRoute } from './node-route.js';
import { backoff, type ReconnectPolicy } from './reconnect.js';
import { webSocketTransport, type Transport, type TransportFactory } from './transport.js';

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
}

/** Where a client moved: lobby WebSocket URLs, and the new node's id and region ('' if it did not say). */
export interface NodeMove {
  from: string;
  to: string;
  node: string;
  region: string;
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

/** A signal as the sender writes it; the server fills in `from`. */
export interface OutgoingSignal {
  to: string;
  kind: SignalKindName;
  sdp?: string;
  cand?: string;
  mid?: string;
}

export interface LobbyEvents {
  playerJoined: [player: Player];
  playerLeft: [event: PlayerLeft];
  roomClosed: [event: RoomClosed];
  signal: [signal: Signal];
  /** A member's name, ready state or ping changed (ours included). */
  playerUpdated: [player: Player];
  /** The host changed the room's settings. */
  roomUpdated: [room: RoomInfo];
  /** The host started the game. */
  gameStarted: [event: GameStarted];
  /** A chat line of our room (ours come back too). Plain text: render it as text. */
  chatMessage: [message: ChatMessage];
  /** The watched room list changed (after watchRooms). */
  roomListUpdate: [update: RoomListUpdate];
  /** The room's host left and the server promoted another member (rooms made with migrate). */
  hostChanged: [event: HostChanged];
  /** Fresh TURN credentials for this session, before the old ones expire. */
  iceRefresh: [ice: Ice];
  /**
   * Our party's leader pressed Play now and the server put us in a room with
   * the party. Start a RoomSession from it in the listener (synchronously):
   * the room's events follow at once.
   */
  roomJoined: [joined: RoomJoined];
  /** Our party changed: a member joined, left or was renamed, or the leader changed. */
  partyUpdated: [party: Party];
  /** A frame of the room we watch (after spectate), the server's delay behind the players. SpectatorSession reads these. */
  spectatorFrame: [frame: SpectatorFrame];
  /** We no longer watch: the room closed (`reason` as roomClosed). */
  spectateEnded: [event: SpectateEnded];
  /** A server notice (an Error with no request) or a frame we could not read. */
  error: [error: LobbyError];
  /** The connection dropped and we are taking the seat back (with `resume`); `attempt` counts from 1. */
  reconnecting: [info: { attempt: number; code: number; reason: string }];
  /** The seat is back: the same session, with every missed frame replayed. */
  resumed: [];
  /**
   * A request was answered room_elsewhere (the room, or the region asked
   * for, lives on another node of the cluster) and this client moved there:
   * the old connection closed cleanly, a new session said hello on `to`,
   * and the request went again. `url`, `node`, `region` and `session`
   * already describe the new node, and a resume goes there. Rooms are
   * listed on every node, so RoomDirectory watches again by itself.
   */
  moved: [move: NodeMove];
  /**
   * The session is over: closed by us, by the server, or a drop we could not
   * resume. `error` is the server's refusal when it said why: code
   * 'room_lost' when the node holding our seat (and room) stopped.
   */
  close: [info: { code: number; reason: string; error: LobbyError | null }];
}

interface Pending {
  /** The connection the request went out on (a move waits for these to be answered). */
  via: Transport;
  settle(frame: Frame): void;
  fail(err: LobbyError): void;
}

const MAX_ID = 0xffff_ffff;

/**
 * One lobby session over a WebSocket: requests correlated by id, each with a
 * timeout, and the server's room events.
 */
export class LobbyClient {
  private readonly events = new Emitter<LobbyEvents>();
  private readonly pending = new Map<number, Pending>();
  private transport: Transport | null = null;
  // Moving to another node: the new node's connection until its Welcome,
  // and a promise that holds new requests until we are there.
  private candidate: Transport | null = null;
  private moving: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  private currentUrl: string;
  // The URL the client was made with: after a move, it says whether the
  // node we moved to is gone when that one stops answering.
  private readonly homeUrl: string;
  private nodeId = '';
  private nodeRegion = '';
  private lastId = 0;
  private open = false;
  private everOpen = false;
  private finished = false;
  private sessionId = '';
  private currentName: string;
  private readonly requestTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly factory: TransportFactory;
  // Resuming: the token of the last Welcome, how long the server holds the
  // seat, and how many frames this session has received (the server replays
  // what came after).
  private resumeToken = '';
  private graceMs = 0;
  private received = 0;
  // The server's frame limit from the Welcome: a spectator frame's data may
  // be at most this less the envelope (protocol.MaxSpectatorData).
  private maxFrame = 0;
  private resuming: { attempt: number; deadline: number; timer: ReturnType<typeof setTimeout> | null } | null = null;
  // TURN credentials from the Welcome of this node's session, and when they came.
  private welcomeIce: { ice: Ice; at: number } | null = null;

  private constructor(
    url: string,
    name: string,
    private readonly options: LobbyClientOptions,
  ) {
    this.currentUrl = url;
    this.homeUrl = url;
    this.currentName = name;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.factory = options.transport ?? webSocketTransport;
  }

  /**
   * Opens the connection and says hello; resolves once the server welcomed us.
   * `name` may be '' to browse rooms first: creating or joining then needs setName.
   */
  static async connect(url: string, name: string, options: LobbyClientOptions = {}): Promise<LobbyClient> {
    const client = new LobbyClient(url, name, options);
    await client.dial();
    try {
      const welcome = await client.request(
        'hello',
        { v: VERSION, name, device: options.device, pings: options.pings },
        'welcome',
      );
      client.sessionId = welcome.session;
      client.noteWelcome(welcome);
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
    return this.sessionId;
  }

  /** True while the connection is up (false while resuming); a move to another node counts as up. */
  get connected(): boolean {
    return (this.open || this.moving !== null) && this.resuming === null;
  }

  /** The lobby WebSocket URL this client is connected to: the one it was made with until a 'moved'. */
  get url(): string {
    return this.currentUrl;
  }

  /** The id of the cluster node we are on, from its Welcome ('' on a single node). */
  get node(): string {
    return this.nodeId;
  }

  /** The region of the node we are on ('' on a single node or a node without one). */
  get region(): string {
    return this.nodeRegion;
  }

  /**
   * TURN credentials the server gave this session with its Welcome, while
   * less than half their lifetime is gone; null otherwise (or from a server
   * that sends none). A client about to join can start gathering relay
   * candidates with them before the join's reply; they relay nothing until
   * the session is in a room. A move to another node replaces them.
   */
  get welcomeIceServers(): Ice | null {
    const w = this.welcomeIce;
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

  /** Removes a player and bans it from the room (host only). */
  async kick(playerId: string): Promise<void> {
    await this.call('kick', { id: playerId }, 'ok');
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
    return this.maxFrame > 0 ? Math.min(MAX_SPECTATOR_DATA, this.maxFrame - 64) : MAX_SPECTATOR_DATA;
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
    const transport = this.transport;
    // A frame for spectators is worth nothing later: while resuming, skip it.
    if (!transport || !this.open || this.resuming !== null) return;
    transport.send(encodeFrame('spectatorFrame', 0, { key, data }));
  }

  /** Closes the connection and ends the session; pending requests reject with code 'closed'. */
  close(): void {
    const t = this.transport;
    const c = this.candidate;
    this.transport = null;
    this.candidate = null;
    this.open = false;
    t?.close(1000, 'client closed');
    c?.close(1000, 'client closed');
    this.finish(1000, 'client closed');
  }

  private noteWelcome(w: Welcome): void {
    this.resumeToken = w.resume;
    this.graceMs = w.grace * 1000;
    this.maxFrame = w.maxFrame;
    this.nodeId = w.node;
    this.nodeRegion = w.region;
    // A resumed Welcome has none: the session's own still hold.
    if (w.ice.servers.length > 0) this.welcomeIce = { ice: w.ice, at: Date.now() };
    else if (!w.resumed) this.welcomeIce = null;
  }

  /**
   * Sends a request and follows room_elsewhere: moves to the node it names
   * and sends the same request there, at most MAX_NODE_HOPS times.
   */
  private async call<T extends MessageTypeName, R extends MessageTypeName>(
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
  ): Promise<MessageMap[R]> {
    const route = new NodeRoute(type, this.currentUrl);
    const send = (): Promise<MessageMap[R]> => this.request(type, body, expect);
    // Not awaited unless a move is on: a request goes out synchronously.
    while (this.moving) await this.moving;
    let reply = send();
    for (;;) {
      try {
        return await reply;
      } catch (err) {
        if (!(err instanceof RoomElsewhereError)) throw err;
        reply = (await this.moveTo(route.next(err.url), err.region, send)).reply;
      }
    }
  }

  /**
   * Moves this client to the node at `to`, one move at a time, and sends
   * `resend` there before any request held by the move; rejects (still on
   * the old node) if it cannot move. The reply is wrapped so awaiting the
   * move does not await the reply too.
   */
  private async moveTo<V>(to: string, region: string, resend: () => Promise<V>): Promise<{ reply: Promise<V> }> {
    while (this.moving) await this.moving;
    if (to === this.currentUrl) return { reply: resend() }; // another request took us there meanwhile
    let done = (): void => undefined;
    this.moving = new Promise((resolve) => (done = resolve));
    try {
      await this.move(to, region);
      return { reply: resend() };
    } catch (err) {
      // The old connection dropped during the move and the new one failed: nothing left.
      if (this.transport === null && !this.finished) this.finish(1006, `lost the lobby connection while moving to ${to}`);
      throw err;
    } finally {
      this.moving = null;
      done();
    }
  }

  private async move(to: string, region: string): Promise<void> {
    const from = this.currentUrl;
    // Replies owed by the old node arrive first: closing it would lose them.
    await this.whenIdle();
    if (this.finished) throw new LobbyError(ClientErrorCode.Closed, 'the client closed while moving to another node');
    // The new node first, so a node that cannot be reached leaves us where we were.
    const next = await this.dial(to, false);
    let welcome: Welcome;
    try {
      welcome = await this.request(
        'hello',
        { v: VERSION, name: this.currentName, device: this.options.device, pings: this.options.pings },
        'welcome',
        { via: next },
      );
    } catch (err) {
      if (this.candidate === next) this.candidate = null;
      next.close(1000, 'hello failed');
      throw err;
    }
    this.candidate = null;
    if (this.finished) {
      next.close(1000, 'client closed');
      throw new LobbyError(ClientErrorCode.Closed, 'the client closed while moving to another node');
    }
    const old = this.transport;
    this.transport = next;
    this.open = true;
    this.currentUrl = to;
    this.sessionId = welcome.session;
    this.received = 1; // the new session's Welcome
    this.noteWelcome(welcome);
    // Status 1000 tells the old node we left on purpose: it holds no seat for a resume.
    old?.close(1000, 'moved to another node');
    this.events.emit('moved', { from, to, node: welcome.node, region: welcome.region || region });
  }

  /** Resolves once no request waits for a reply. */
  private whenIdle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private forget(id: number): void {
    this.pending.delete(id);
    this.wakeIfIdle();
  }

  private wakeIfIdle(): void {
    if (this.pending.size > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * Opens a transport; resolves when it is open, rejects if it closes or
   * times out first. It becomes the client's connection at once, or with
   * `install` false the candidate of a move, whose frames answer only the
   * hello sent on it.
   */
  private dial(url = this.currentUrl, install = true): Promise<Transport> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let opened = false;
      let transport: Transport | null = null;
      const fail = (why: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(new LobbyError(ClientErrorCode.Unreachable, `cannot reach the lobby server at ${url}: ${why}`));
      };
      const timer = setTimeout(() => {
        fail(`no answer in ${this.connectTimeoutMs} ms`);
        transport?.close(1000, 'connect timeout');
      }, this.connectTimeoutMs);
      try {
        transport = this.factory(url, {
          open: () => {
            if (settled || this.finished || transport === null) return;
            settled = true;
            opened = true;
            clearTimeout(timer);
            if (install) {
              this.transport = transport;
              this.open = true;
            } else {
              this.candidate = transport;
            }
            this.everOpen = true;
            resolve(transport);
          },
          message: (data) => {
            if (this.transport === transport) this.onMessage(data, true);
            else if (this.candidate === transport) this.onMessage(data, false);
          },
          close: (code, reason) => {
            fail(reason || `connection closed (${code})`);
            if (!opened) return;
            if (this.transport === transport && transport !== null) this.onDrop(transport, code, reason);
            else if (this.candidate === transport && transport !== null) {
              this.candidate = null;
              this.failPending(transport, new LobbyError(ClientErrorCode.Unreachable, `${url} closed the connection (${code})`));
            }
          },
        });
      } catch (err) {
        fail(err instanceof Error ? err.message : String(err));
      }
    });
  }

  /** The open transport closed under us: resume if we can, else the session is over. */
  private onDrop(dropped: Transport, code: number, reason: string): void {
    this.transport = null;
    this.open = false;
    if (this.finished) return;
    if (this.moving !== null) {
      // The move's new connection replaces this one (if that fails, the move
      // ends the session); replies owed on this one will not come.
      this.failPending(dropped, new LobbyError(ClientErrorCode.Closed, `connection closed while moving to another node (${code})`));
      return;
    }
    const canResume = this.options.resume === true && this.resumeToken !== '' && this.graceMs > 0;
    if (!canResume) {
      this.finish(code, reason);
      return;
    }
    this.resuming ??= { attempt: 0, deadline: Date.now() + this.graceMs, timer: null };
    this.scheduleResume(code, reason);
  }

  private scheduleResume(code: number, reason: string): void {
    const r = this.resuming;
    if (r === null || this.finished) return;
    r.attempt++;
    const policy = this.options.resumePolicy ?? backoff({ initialMs: 250, maxMs: 2_000 });
    const delay = policy.nextRetryDelayMs(r.attempt);
    if (delay === null || Date.now() + delay > r.deadline) {
      this.finish(code, reason || 'could not resume the session');
      return;
    }
    this.events.emit('reconnecting', { attempt: r.attempt, code, reason });
    r.timer = setTimeout(() => {
      r.timer = null;
      void this.tryResume(code, reason);
    }, delay);
  }

  private async tryResume(code: number, reason: string): Promise<void> {
    const url = await this.dialForResume();
    if (url === null) {
      this.scheduleResume(code, reason);
      return;
    }
    const attempt = this.transport;
    try {
      // onMessage completes the resume as the Welcome arrives, before any replayed frame.
      await this.request(
        'hello',
        { v: VERSION, resume: this.resumeToken, received: this.received },
        'welcome',
        { duringResume: true },
      );
      this.currentUrl = url;
    } catch (err) {
      // A later attempt may own the connection by now; leave it alone.
      if (this.transport !== attempt || attempt === null) return;
      if (err instanceof RoomElsewhereError) {
        // The first node says our seat's node is alive, only slow: keep trying that one.
        this.transport = null;
        this.open = false;
        attempt.close(1000, 'seat held elsewhere');
        this.scheduleResume(code, reason);
      } else if (err instanceof LobbyError && (err.code === ErrorCode.ResumeFailed || err.code === ErrorCode.RoomLost)) {
        this.transport = null;
        this.open = false;
        attempt.close(1000, 'resume failed');
        const lost = err.code === ErrorCode.RoomLost;
        this.finish(code, lost ? err.message : 'the server no longer holds our seat', lost ? err : null);
      } else {
        // No answer: drop this connection; onDrop schedules the next try.
        attempt.close(4000, 'resume hello failed');
      }
    }
  }

  /**
   * Sends one request on our connection (or `via`, a move's new one) and
   * settles with its reply. room_elsewhere rejects with RoomElsewhereError.
   */
  private request<T extends MessageTypeName, R extends MessageTypeName>(
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
    opts: { duringResume?: boolean; via?: Transport } = {},
  ): Promise<MessageMap[R]> {
    return new Promise((resolve, reject) => {
      const transport = opts.via ?? this.transport;
      const usable = opts.via !== undefined || (this.open && (this.resuming === null || opts.duringResume === true));
      if (!transport || !usable) {
        reject(new LobbyError(ClientErrorCode.Closed, `${type}: not connected`));
        return;
      }
      this.lastId = this.lastId >= MAX_ID ? 1 : this.lastId + 1;
      const id = this.lastId;
      let frame: Uint8Array;
      try {
        frame = encodeFrame(type, id, body);
      } catch (err) {
        reject(err);
        return;
      }
      const timer = setTimeout(() => {
        this.forget(id);
        reject(new LobbyError(ClientErrorCode.Timeout, `${type}: no reply in ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      this.pending.set(id, {
        via: transport,
        settle: (reply) => {
          clearTimeout(timer);
          if (reply.t === 'error') reject(lobbyErrorFrom(bodyOf(reply)));
          else if (reply.t === expect) resolve(bodyOf(reply) as MessageMap[R]);
          else reject(new LobbyError(ClientErrorCode.Protocol, `${type}: unexpected reply ${reply.t}`));
        },
        fail: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      transport.send(frame);
    });
  }

  /** Fails the requests sent on `transport`, a move's connection that closed before its Welcome. */
  private failPending(transport: Transport, err: LobbyError): void {
    for (const [id, p] of this.pending) {
      if (p.via !== transport) continue;
      this.forget(id);
      p.fail(err);
    }
  }

  private onMessage(data: ArrayBuffer | string, counted: boolean): void {
    // Every frame of our session counts toward `received`, read or not: the
    // server counts what it sent. Only the Welcome answering a resume does
    // not, nor anything a move's candidate connection says.
    if (counted) this.received++;
    if (typeof data === 'string') {
      this.events.emit('error', new LobbyError(ClientErrorCode.Protocol, 'server sent a text frame'));
      return;
    }
    let frame: Frame;
    try {
      frame = decodeFrame(data);
    } catch (err) {
      // Newer servers may send types we do not know yet: skip them.
      if (err instanceof ProtocolError && err.kind === 'unknown_type') return;
      const msg = err instanceof Error ? err.message : String(err);
      this.events.emit('error', new LobbyError(ClientErrorCode.Protocol, msg));
      return;
    }
    // Spectator frames are outside the session's numbered frames: the
    // server neither counts nor replays them (docs/protocol.md, Spectators).
    if (frame.t === 'spectatorFrame' && counted) this.received--;
    if (frame.t === 'welcome' && frame.b?.resumed === true && counted) {
      this.received--;
      this.noteWelcome(frame.b);
      this.resuming = null;
      this.events.emit('resumed');
    }
    // A move's new connection answers its hello and has nothing else to say yet.
    if (!counted && frame.id === 0) return;
    if (frame.id !== 0) {
      const p = this.pending.get(frame.id);
      if (p) {
        this.forget(frame.id);
        p.settle(frame);
      }
      // A reply that arrives after its timeout has nobody to go to.
      return;
    }
    this.dispatch(frame);
  }

  private dispatch(frame: Frame): void {
    switch (frame.t) {
      case 'playerJoined':
        this.events.emit('playerJoined', bodyOf(frame).player);
        break;
      case 'playerLeft':
        this.events.emit('playerLeft', bodyOf(frame));
        break;
      case 'roomClosed':
        this.events.emit('roomClosed', bodyOf(frame));
        break;
      case 'signal':
        this.events.emit('signal', bodyOf(frame));
        break;
      case 'playerUpdated':
        this.events.emit('playerUpdated', bodyOf(frame).player);
        break;
      case 'roomUpdated':
        this.events.emit('roomUpdated', bodyOf(frame).room);
        break;
      case 'gameStarted':
        this.events.emit('gameStarted', bodyOf(frame));
        break;
      case 'chatMessage':
        this.events.emit('chatMessage', bodyOf(frame));
        break;
      case 'roomListUpdate':
        this.events.emit('roomListUpdate', bodyOf(frame));
        break;
      case 'hostChanged':
        this.events.emit('hostChanged', bodyOf(frame));
        break;
      case 'iceRefresh':
        this.events.emit('iceRefresh', bodyOf(frame).ice);
        break;
      case 'roomJoined':
        this.events.emit('roomJoined', bodyOf(frame));
        break;
      case 'partyUpdated':
        this.events.emit('partyUpdated', bodyOf(frame).party);
        break;
      case 'spectatorFrame':
        this.events.emit('spectatorFrame', bodyOf(frame));
        break;
      case 'spectateEnded':
        this.events.emit('spectateEnded', bodyOf(frame));
        break;
      case 'error':
        this.events.emit('error', lobbyErrorFrom(bodyOf(frame)));
        break;
      default:
        // Replies without an id and client-only types mean nothing here.
        break;
    }
  }

  /**
   * Dials for a resume: the node we are on or, if it does not answer and we
   * moved there, the node we started on, which knows whether the other is
   * gone (room_lost) or only slow (room_elsewhere). The URL dialled, or null.
   */
  private async dialForResume(): Promise<string | null> {
    try {
      await this.dial(this.currentUrl);
      return this.currentUrl;
    } catch {
      if (this.homeUrl === this.currentUrl || this.finished) return null;
    }
    try {
      await this.dial(this.homeUrl);
      return this.homeUrl;
    } catch {
      return null;
    }
  }

  /**
   * Ends the session once: pending requests fail (with `error`, or 'closed'),
   * and 'close' fires if we were ever connected.
   */
  private finish(code: number, reason: string, error: LobbyError | null = null): void {
    if (this.finished) return;
    this.finished = true;
    if (this.resuming?.timer) clearTimeout(this.resuming.timer);
    this.resuming = null;
    const err = error ?? new LobbyError(ClientErrorCode.Closed, `connection closed${reason ? `: ${reason}` : ` (${code})`}`);
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.fail(err);
    this.wakeIfIdle();
    if (this.everOpen) this.events.emit('close', { code, reason, error });
  }
}
