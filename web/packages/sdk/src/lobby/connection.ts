import { bodyOf, encodeFrame, type Frame, type MessageMap, type MessageTypeName } from '@hostrelay/protocol';
import { ClientErrorCode, LobbyError, lobbyErrorFrom } from '../errors.js';
import type { Transport, TransportFactory } from '../transport.js';

/** What a dialled transport reports once it is open. */
export interface DialHandlers {
  /** It opened: take it (true), or refuse it (false: the dial then times out). */
  open(transport: Transport): boolean;
  message(transport: Transport, data: ArrayBuffer | string): void;
  close(transport: Transport, code: number, reason: string): void;
}

interface Pending {
  /** The transport the request went out on (a move waits for these to be answered). */
  via: Transport;
  settle(frame: Frame): void;
  fail(err: LobbyError): void;
}

const MAX_ID = 0xffff_ffff;

/**
 * The lobby's plumbing, below resumes and moves: opening a transport within
 * a timeout, and requests correlated by id, each with its own timeout. Ids
 * run on across transports, and a request outlives the transport it went
 * out on unless failed: a resumed session's replay answers it.
 */
export class Connection {
  private readonly pending = new Map<number, Pending>();
  private idleWaiters: (() => void)[] = [];
  private lastId = 0;

  constructor(
    private readonly factory: TransportFactory,
    private readonly connectTimeoutMs: number,
    private readonly requestTimeoutMs: number,
  ) {}

  /**
   * Opens a transport to `url`; resolves when it is open, rejects with
   * 'unreachable' if it closes or times out first. Once open (and taken by
   * `handlers.open`), `handlers` hear its frames and its close.
   */
  dial(url: string, handlers: DialHandlers): Promise<Transport> {
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
            if (settled || transport === null || !handlers.open(transport)) return;
            settled = true;
            opened = true;
            clearTimeout(timer);
            resolve(transport);
          },
          message: (data) => {
            if (opened && transport !== null) handlers.message(transport, data);
          },
          close: (code, reason) => {
            fail(reason || `connection closed (${code})`);
            if (opened && transport !== null) handlers.close(transport, code, reason);
          },
        });
      } catch (err) {
        fail(err instanceof Error ? err.message : String(err));
      }
    });
  }

  /**
   * Sends one request on `via` and settles with its reply: the `expect`ed
   * message, or a LobbyError (room_elsewhere as RoomElsewhereError).
   */
  request<T extends MessageTypeName, R extends MessageTypeName>(
    via: Transport,
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
  ): Promise<MessageMap[R]> {
    return new Promise((resolve, reject) => {
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
        via,
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
      via.send(frame);
    });
  }

  /** Hands a reply (a frame with an id) to its request; one that came after its timeout has nobody to go to. */
  answer(frame: Frame): void {
    const p = this.pending.get(frame.id);
    if (!p) return;
    this.forget(frame.id);
    p.settle(frame);
  }

  /** Fails the requests sent on `transport` (a connection whose replies will not come). */
  failOn(transport: Transport, err: LobbyError): void {
    for (const [id, p] of this.pending) {
      if (p.via !== transport) continue;
      this.forget(id);
      p.fail(err);
    }
  }

  /** Fails every request still waiting. */
  failAll(err: LobbyError): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.fail(err);
    this.wakeIfIdle();
  }

  /** Resolves once no request waits for a reply. */
  whenIdle(): Promise<void> {
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
}
