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
import { ClientErrorCode, LobbyError, lobbyErrorFrom } from './errors.js';
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
  /** The session is over: closed by us, by the server, or a drop we could not resume. */
  close: [info: { code: number; reason: string }];
}

interface Pending {
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

  private constructor(
    private readonly url: string,
    name: string,
    private readonly options: LobbyClientOptions,
  ) {
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

  /** True while the connection is up (false while resuming). */
  get connected(): boolean {
    return this.open && this.resuming === null;
  }

  on<K extends keyof LobbyEvents>(event: K, listener: (...args: LobbyEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  /** Creates a room with this client as its host. */
  createRoom(options: CreateRoomOptions): Promise<RoomJoined> {
    return this.request(
      'createRoom',
      {
        name: options.name,
        maxPlayers: options.maxPlayers,
        public: options.public,
        password: options.password,
        mode: options.mode,
        migrate: options.migrate,
      },
      'roomJoined',
    );
  }

  /** Joins a room by its code; a wrong or missing password rejects with code 'wrong_password'. */
  joinRoom(code: string, password?: string): Promise<RoomJoined> {
    return this.request('joinRoom', { code, password }, 'roomJoined');
  }

  /**
   * Play now: a seat in the fullest open public room of `mode`, or a new
   * public room of that mode with us as host. In a party only the leader may
   * call it ('forbidden' otherwise), and the whole party comes along: the
   * other members get a 'roomJoined' event.
   */
  quickPlay(mode: string, options: QuickPlayOptions = {}): Promise<RoomJoined> {
    return this.request('quickPlay', { mode, maxPlayers: options.maxPlayers, migrate: options.migrate }, 'roomJoined');
  }

  /** Makes a party with us as its leader; share its code (at most MAX_PARTY_SIZE members). */
  createParty(): Promise<PartyJoined> {
    return this.request('createParty', undefined, 'partyJoined');
  }

  /** Joins a friend's party by its code ('party_not_found', 'party_full', 'already_in_party'). */
  joinParty(code: string): Promise<PartyJoined> {
    return this.request('joinParty', { code }, 'partyJoined');
  }

  async leaveParty(): Promise<void> {
    await this.request('leaveParty', undefined, 'ok');
  }

  async leaveRoom(): Promise<void> {
    await this.request('leaveRoom', undefined, 'ok');
  }

  /** Relays WebRTC negotiation to another member (clients may signal only the host). */
  async sendSignal(signal: OutgoingSignal): Promise<void> {
    await this.request('signal', signal, 'ok');
  }

  /** Changes our name; in a room everyone hears playerUpdated. */
  async setName(name: string): Promise<void> {
    await this.request('setName', { name }, 'ok');
    this.currentName = name.trim();
  }

  /** Marks us ready (or not) to start. */
  async setReady(ready: boolean): Promise<void> {
    await this.request('setReady', { ready }, 'ok');
  }

  /** Replaces the room's settings (host only; others get 'forbidden'). */
  async updateRoom(settings: RoomSettings): Promise<void> {
    const { password, ...rest } = settings;
    await this.request('updateRoom', { ...rest, password, setPassword: password !== undefined }, 'ok');
  }

  /** Removes a player and bans it from the room (host only). */
  async kick(playerId: string): Promise<void> {
    await this.request('kick', { id: playerId }, 'ok');
  }

  /** Starts the game once everyone else is ready (host only; 'not_ready' otherwise). */
  async startGame(): Promise<void> {
    await this.request('startGame', undefined, 'ok');
  }

  /** Sends a chat line to the room; it comes back as a chatMessage event. */
  async sendChat(text: string): Promise<void> {
    await this.request('chat', { text }, 'ok');
  }

  /**
   * Subscribes to the public room list: resolves with the first rooms, then
   * roomListUpdate events bring the rest and every change. RoomDirectory
   * keeps the list for you.
   */
  async watchRooms(): Promise<RoomSummary[]> {
    return (await this.request('watchRooms', undefined, 'roomList')).rooms;
  }

  async unwatchRooms(): Promise<void> {
    await this.request('unwatchRooms', undefined, 'ok');
  }

  /**
   * Watches a room without a seat (it may be full or started): resolves with
   * the room and the server's delay, then 'spectatorFrame' events bring the
   * host's stream that far behind the players. SpectatorSession wraps this.
   */
  spectate(code: string, password?: string): Promise<Spectating> {
    return this.request('spectate', { code, password }, 'spectating');
  }

  /** Stops watching ('not_in_room' if we were not). */
  async stopSpectating(): Promise<void> {
    await this.request('stopSpectating', undefined, 'ok');
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
    this.transport = null;
    this.open = false;
    t?.close(1000, 'client closed');
    this.finish(1000, 'client closed');
  }

  private noteWelcome(w: Welcome): void {
    this.resumeToken = w.resume;
    this.graceMs = w.grace * 1000;
    this.maxFrame = w.maxFrame;
  }

  /** Opens a transport; resolves when it is open, rejects if it closes or times out first. */
  private dial(): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let opened = false;
      let transport: Transport | null = null;
      const fail = (why: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(new LobbyError(ClientErrorCode.Unreachable, `cannot reach the lobby server at ${this.url}: ${why}`));
      };
      const timer = setTimeout(() => {
        fail(`no answer in ${this.connectTimeoutMs} ms`);
        transport?.close(1000, 'connect timeout');
      }, this.connectTimeoutMs);
      try {
        transport = this.factory(this.url, {
          open: () => {
            if (settled || this.finished) return;
            settled = true;
            opened = true;
            clearTimeout(timer);
            this.transport = transport;
            this.open = true;
            this.everOpen = true;
            resolve();
          },
          message: (data) => {
            if (this.transport === transport) this.onMessage(data);
          },
          close: (code, reason) => {
            fail(reason || `connection closed (${code})`);
            if (opened && this.transport === transport) this.onDrop(code, reason);
          },
        });
      } catch (err) {
        fail(err instanceof Error ? err.message : String(err));
      }
    });
  }

  /** The open transport closed under us: resume if we can, else the session is over. */
  private onDrop(code: number, reason: string): void {
    this.transport = null;
    this.open = false;
    if (this.finished) return;
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
    try {
      await this.dial();
    } catch {
      this.scheduleResume(code, reason);
      return;
    }
    const attempt = this.transport;
    try {
      // onMessage completes the resume as the Welcome arrives, before any replayed frame.
      await this.request('hello', { v: VERSION, resume: this.resumeToken, received: this.received }, 'welcome', true);
    } catch (err) {
      // A later attempt may own the connection by now; leave it alone.
      if (this.transport !== attempt || attempt === null) return;
      if (err instanceof LobbyError && err.code === 'resume_failed') {
        this.transport = null;
        this.open = false;
        attempt.close(1000, 'resume failed');
        this.finish(code, 'the server no longer holds our seat');
      } else {
        // No answer: drop this connection; onDrop schedules the next try.
        attempt.close(4000, 'resume hello failed');
      }
    }
  }

  private request<T extends MessageTypeName, R extends MessageTypeName>(
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
    duringResume = false,
  ): Promise<MessageMap[R]> {
    return new Promise((resolve, reject) => {
      const transport = this.transport;
      if (!transport || !this.open || (this.resuming !== null && !duringResume)) {
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
        this.pending.delete(id);
        reject(new LobbyError(ClientErrorCode.Timeout, `${type}: no reply in ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      this.pending.set(id, {
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

  private onMessage(data: ArrayBuffer | string): void {
    // Every frame counts toward `received`, read or not: the server counts
    // what it sent. Only the Welcome answering a resume does not.
    this.received++;
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
    if (frame.t === 'spectatorFrame') this.received--;
    if (frame.t === 'welcome' && frame.b?.resumed === true) {
      this.received--;
      this.noteWelcome(frame.b);
      this.resuming = null;
      this.events.emit('resumed');
    }
    if (frame.id !== 0) {
      const p = this.pending.get(frame.id);
      if (p) {
        this.pending.delete(frame.id);
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

  /** Ends the session once: pending requests fail, and 'close' fires if we were ever connected. */
  private finish(code: number, reason: string): void {
    if (this.finished) return;
    this.finished = true;
    if (this.resuming?.timer) clearTimeout(this.resuming.timer);
    this.resuming = null;
    const err = new LobbyError(ClientErrorCode.Closed, `connection closed${reason ? `: ${reason}` : ` (${code})`}`);
    for (const p of this.pending.values()) p.fail(err);
    this.pending.clear();
    if (this.everOpen) this.events.emit('close', { code, reason });
  }
}
