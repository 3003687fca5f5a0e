import {
  ProtocolError,
  VERSION,
  bodyOf,
  decodeFrame,
  encodeFrame,
  type ChatMessage,
  type Frame,
  type GameStarted,
  type MessageMap,
  type MessageTypeName,
  type Player,
  type PlayerLeft,
  type RoomClosed,
  type RoomInfo,
  type RoomJoined,
  type RoomListUpdate,
  type RoomSummary,
  type Signal,
  type SignalKindName,
} from '../protocol';
import { Emitter, type Unsubscribe } from './emitter';
import { ClientErrorCode, LobbyError, lobbyErrorFrom } from './errors';
import { webSocketTransport, type Transport, type TransportFactory } from './transport';

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
}

export interface CreateRoomOptions {
  name: string;
  maxPlayers: number;
  public: boolean;
  password?: string;
  /** A game-mode label shown in the room list. */
  mode?: string;
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
  /** A server notice (an Error with no request) or a frame we could not read. */
  error: [error: LobbyError];
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
  private sessionId = '';
  private currentName: string;
  private readonly requestTimeoutMs: number;

  private constructor(name: string, options: LobbyClientOptions) {
    this.currentName = name;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  }

  /**
   * Opens the connection and says hello; resolves once the server welcomed us.
   * `name` may be '' to browse rooms first: creating or joining then needs setName.
   */
  static async connect(url: string, name: string, options: LobbyClientOptions = {}): Promise<LobbyClient> {
    const client = new LobbyClient(name, options);
    await client.dial(url, options.transport ?? webSocketTransport, options.connectTimeoutMs ?? 10_000);
    try {
      const welcome = await client.request(
        'hello',
        { v: VERSION, name, device: options.device, pings: options.pings },
        'welcome',
      );
      client.sessionId = welcome.session;
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

  get connected(): boolean {
    return this.open;
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
      },
      'roomJoined',
    );
  }

  /** Joins a room by its code; a wrong or missing password rejects with code 'wrong_password'. */
  joinRoom(code: string, password?: string): Promise<RoomJoined> {
    return this.request('joinRoom', { code, password }, 'roomJoined');
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

  /** Closes the connection; pending requests reject with code 'closed'. */
  close(): void {
    const t = this.transport;
    if (!t) return;
    t.close(1000, 'client closed');
    this.onClose(1000, 'client closed');
  }

  private dial(url: string, factory: TransportFactory, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (why: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(new LobbyError(ClientErrorCode.Unreachable, `cannot reach the lobby server at ${url}: ${why}`));
      };
      const timer = setTimeout(() => {
        fail(`no answer in ${timeoutMs} ms`);
        this.transport?.close(1000, 'connect timeout');
      }, timeoutMs);
      try {
        this.transport = factory(url, {
          open: () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            this.open = true;
            resolve();
          },
          message: (data) => this.onMessage(data),
          close: (code, reason) => {
            fail(reason || `connection closed (${code})`);
            this.onClose(code, reason);
          },
        });
      } catch (err) {
        fail(err instanceof Error ? err.message : String(err));
      }
    });
  }

  private request<T extends MessageTypeName, R extends MessageTypeName>(
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
  ): Promise<MessageMap[R]> {
    return new Promise((resolve, reject) => {
      const transport = this.transport;
      if (!transport || !this.open) {
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
      case 'error':
        this.events.emit('error', lobbyErrorFrom(bodyOf(frame)));
        break;
      default:
        // Replies without an id and client-only types mean nothing here.
        break;
    }
  }

  private onClose(code: number, reason: string): void {
    if (!this.transport) return;
    this.transport = null;
    const wasOpen = this.open;
    this.open = false;
    const err = new LobbyError(ClientErrorCode.Closed, `connection closed${reason ? `: ${reason}` : ` (${code})`}`);
    for (const p of this.pending.values()) p.fail(err);
    this.pending.clear();
    if (wasOpen) this.events.emit('close', { code, reason });
  }
}
