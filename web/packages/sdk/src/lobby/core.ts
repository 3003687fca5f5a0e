import {
  ProtocolError,
  decodeFrame,
  encodeFrame,
  type Frame,
  type Ice,
  type MessageMap,
  type MessageTypeName,
  type Welcome,
} from '@hostrelay/protocol';
import type { Emitter } from '../emitter.js';
import { ClientErrorCode, LobbyError } from '../errors.js';
import type { Transport } from '../transport.js';
import type { Connection } from './connection.js';
import { dispatchEvent, type LobbyEvents } from './events.js';

/**
 * Where a LobbyClient is. The client holds one at a time, and the
 * connection a request goes out on is the state's `transport`.
 *
 *   connecting ─▶ open ⇄ moving        (a request answered room_elsewhere)
 *                 open ⇄ resuming      (a drop, with the resume option)
 *                 any ─▶ closed        (close(), a refusal, a drop we cannot resume)
 */
export type LobbyState =
  /** The first connection has not opened yet: nothing to resume, no 'close' to fire. */
  | { kind: 'connecting' }
  /** Connected to one node. */
  | { kind: 'open'; transport: Transport }
  /**
   * Moving to another node: new requests wait for `arrived`. `transport` is
   * the old node's connection, which answers what it owes (null once it
   * dropped), then the new node's once it welcomed us; `candidate` is the
   * new node's connection until its Welcome.
   */
  | { kind: 'moving'; transport: Transport | null; candidate: Transport | null; arrived: Promise<void> }
  /**
   * The connection dropped and we are taking the seat back until `deadline`
   * (the server's grace). `transport` is attempt `attempt`'s connection to
   * `url` while its hello is out; `timer` the wait before the next attempt.
   */
  | {
      kind: 'resuming';
      transport: Transport | null;
      url: string;
      attempt: number;
      deadline: number;
      timer: ReturnType<typeof setTimeout> | null;
    }
  /** Over: closed by us, by the server, or a drop we could not resume. */
  | { kind: 'closed' };

/** The connection a state reads and routes frames from, if it has one. */
export function transportOf(state: LobbyState): Transport | null {
  return state.kind === 'open' || state.kind === 'moving' || state.kind === 'resuming' ? state.transport : null;
}

/**
 * What a LobbyClient is and knows across its connections: its state, the
 * node it is on, and what the last Welcome said. Frames come in here;
 * resume.ts and moves.ts take it from state to state.
 */
export class LobbyCore {
  state: LobbyState = { kind: 'connecting' };
  /** The lobby WebSocket URL we are on. */
  url: string;
  /** The URL the client was made with: after a move, it says whether the node we moved to is gone when that one stops answering. */
  readonly homeUrl: string;
  session = '';
  node = '';
  region = '';
  // Resuming: the token of the last Welcome, how long the server holds the
  // seat, and how many frames this session has received (the server replays
  // what came after).
  resumeToken = '';
  graceMs = 0;
  received = 0;
  // The server's frame limit from the Welcome: a spectator frame's data may
  // be at most this less the envelope (protocol.MaxSpectatorData).
  maxFrame = 0;
  /** TURN credentials from the Welcome of this node's session, and when they came. */
  welcomeIce: { ice: Ice; at: number } | null = null;
  /** The connection dropped while open or resuming (resume.ts decides what next); by default the session is over. */
  onDrop: (code: number, reason: string) => void = (code, reason) => this.finish(code, reason);

  constructor(
    url: string,
    readonly connection: Connection,
    readonly events: Emitter<LobbyEvents>,
  ) {
    this.url = url;
    this.homeUrl = url;
  }

  /**
   * The connection requests go out on: the open one or, while moving, the
   * old node's until the new one welcomed us; none while resuming.
   */
  get live(): Transport | null {
    return this.state.kind === 'open' || this.state.kind === 'moving' ? this.state.transport : null;
  }

  /** Sends a request on the live connection; 'closed' if there is none. */
  request<T extends MessageTypeName, R extends MessageTypeName>(
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
  ): Promise<MessageMap[R]> {
    const via = this.live;
    if (via === null) return Promise.reject(new LobbyError(ClientErrorCode.Closed, `${type}: not connected`));
    return this.connection.request(via, type, body, expect);
  }

  /**
   * Opens `url` as our connection, at once (the first one, or a resume's
   * attempt), or as the candidate of a move, whose frames answer only the
   * hello sent on it.
   */
  dial(url: string, as: 'current' | 'candidate'): Promise<Transport> {
    return this.connection.dial(url, {
      open: (t) => {
        const s = this.state;
        if (as === 'candidate' && s.kind === 'moving') s.candidate = t;
        else if (as === 'current' && s.kind === 'resuming') {
          s.transport = t;
          s.url = url;
        } else if (as === 'current' && s.kind === 'connecting') this.state = { kind: 'open', transport: t };
        else return false;
        return true;
      },
      message: (t, data) => {
        const s = this.state;
        if (transportOf(s) === t) this.onMessage(data, true);
        else if (s.kind === 'moving' && s.candidate === t) this.onMessage(data, false);
      },
      close: (t, code, reason) => {
        const s = this.state;
        if (transportOf(s) === t) this.dropped(t, code, reason);
        else if (s.kind === 'moving' && s.candidate === t) {
          s.candidate = null;
          this.connection.failOn(t, new LobbyError(ClientErrorCode.Unreachable, `${url} closed the connection (${code})`));
        }
      },
    });
  }

  /** What a Welcome says about the node and the session (a resumed one brings no TURN credentials: the session's own still hold). */
  noteWelcome(w: Welcome): void {
    this.resumeToken = w.resume;
    this.graceMs = w.grace * 1000;
    this.maxFrame = w.maxFrame;
    this.node = w.node;
    this.region = w.region;
    if (w.ice.servers.length > 0) this.welcomeIce = { ice: w.ice, at: Date.now() };
    else if (!w.resumed) this.welcomeIce = null;
  }

  /** Closes every connection and ends the session. */
  close(): void {
    const s = this.state;
    // Closed first, so the connections' close events find nothing to resume.
    this.finish(1000, 'client closed');
    transportOf(s)?.close(1000, 'client closed');
    if (s.kind === 'moving') s.candidate?.close(1000, 'client closed');
  }

  /**
   * Ends the session once: pending requests fail (with `error`, or 'closed'),
   * and 'close' fires if we were ever connected.
   */
  finish(code: number, reason: string, error: LobbyError | null = null): void {
    const s = this.state;
    if (s.kind === 'closed') return;
    this.state = { kind: 'closed' };
    if (s.kind === 'resuming' && s.timer !== null) clearTimeout(s.timer);
    this.connection.failAll(error ?? new LobbyError(ClientErrorCode.Closed, `connection closed${reason ? `: ${reason}` : ` (${code})`}`));
    if (s.kind !== 'connecting') this.events.emit('close', { code, reason, error });
  }

  /** Our connection closed under us. */
  private dropped(t: Transport, code: number, reason: string): void {
    const s = this.state;
    if (s.kind === 'moving') {
      // The move's new connection replaces this one (if that fails, the move
      // ends the session); replies owed on this one will not come.
      s.transport = null;
      this.connection.failOn(t, new LobbyError(ClientErrorCode.Closed, `connection closed while moving to another node (${code})`));
      return;
    }
    if (s.kind === 'resuming') s.transport = null;
    this.onDrop(code, reason);
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
      this.resumed(frame.b);
    }
    // A move's new connection answers its hello and has nothing else to say yet.
    if (!counted && frame.id === 0) return;
    // The server asks a host whose clients hear nothing from it for a sign
    // of life. It is answered here, in the socket's message handler, on
    // purpose: a frozen page cannot run it, and a hidden page (timers at
    // 1 Hz) still runs it at once (docs/protocol.md, Frozen hosts).
    if (frame.t === 'hostCheck') transportOf(this.state)?.send(encodeFrame('hostAlive', 0, { nonce: frame.b?.nonce ?? 0 }));
    if (frame.id !== 0) this.connection.answer(frame);
    else dispatchEvent(this.events, frame);
  }

  /** The Welcome answering a resume: the seat is back, before any replayed frame. */
  private resumed(w: Welcome): void {
    const s = this.state;
    if (s.kind !== 'resuming' || s.transport === null) return;
    this.state = { kind: 'open', transport: s.transport };
    this.url = s.url;
    this.noteWelcome(w);
    this.events.emit('resumed');
  }
}
