import { VERSION, type Hello, type MessageMap, type MessageTypeName, type Welcome } from '@hostrelay/protocol';
import { ClientErrorCode, LobbyError, RoomElsewhereError } from '../errors.js';
import { NodeRoute } from '../node-route.js';
import type { LobbyCore, LobbyState } from './core.js';

type Moving = Extract<LobbyState, { kind: 'moving' }>;

/**
 * Requests that follow room_elsewhere: the client moves to the node it
 * names (a new session there, the old connection closed cleanly) and sends
 * the same request again, at most MAX_NODE_HOPS times. One move at a time;
 * requests made during a move wait for it and go to the new node.
 */
export class Moves {
  constructor(
    private readonly core: LobbyCore,
    /** What a new session's hello says about us. */
    private readonly hello: () => Pick<Hello, 'name'> & Partial<Pick<Hello, 'device' | 'pings' | 'token'>>,
    /** Fetches a fresh identity token for the new node's hello (null: the last one is sent). */
    private readonly freshToken: (() => Promise<string>) | null = null,
  ) {}

  /** Sends a request and settles with its reply, moving as often as room_elsewhere says. */
  async call<T extends MessageTypeName, R extends MessageTypeName>(
    type: T,
    body: Partial<MessageMap[T]> | undefined,
    expect: R,
  ): Promise<MessageMap[R]> {
    const route = new NodeRoute(type, this.core.url);
    const send = (): Promise<MessageMap[R]> => this.core.request(type, body, expect);
    // Not awaited unless a move is on: a request goes out synchronously.
    for (let s = this.core.state; s.kind === 'moving'; s = this.core.state) await s.arrived;
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
   * Moves to the node at `to` and sends `resend` there before any request
   * held by the move; rejects (still on the old node) if it cannot move.
   * The reply is wrapped so awaiting the move does not await the reply too.
   */
  private async moveTo<V>(to: string, region: string, resend: () => Promise<V>): Promise<{ reply: Promise<V> }> {
    const core = this.core;
    for (let s = core.state; s.kind === 'moving'; s = core.state) await s.arrived;
    if (to === core.url) return { reply: resend() }; // another request took us there meanwhile
    const from = core.state;
    // Only from an open connection: a resume or a close began meanwhile.
    if (from.kind !== 'open') throw new LobbyError(ClientErrorCode.Closed, `cannot move to ${to}: not connected`);
    let done = (): void => undefined;
    const moving: Moving = { kind: 'moving', transport: from.transport, candidate: null, arrived: new Promise((resolve) => (done = resolve)) };
    core.state = moving;
    try {
      await this.move(moving, to, region);
      return { reply: resend() };
    } catch (err) {
      // The old connection dropped during the move and the new one failed: nothing left.
      if (core.state === moving && moving.transport === null) core.finish(1006, `lost the lobby connection while moving to ${to}`);
      throw err;
    } finally {
      if (core.state === moving && moving.transport !== null) core.state = { kind: 'open', transport: moving.transport };
      done();
    }
  }

  private async move(moving: Moving, to: string, region: string): Promise<void> {
    const core = this.core;
    const from = core.url;
    const closed = (): LobbyError => new LobbyError(ClientErrorCode.Closed, 'the client closed while moving to another node');
    // Replies owed by the old node arrive first: closing it would lose them.
    await core.connection.whenIdle();
    if (core.state !== moving) throw closed();
    // The new node first, so a node that cannot be reached leaves us where we were.
    if (this.freshToken) await this.freshToken();
    const next = await core.dial(to, 'candidate');
    let welcome: Welcome;
    try {
      const hello = this.hello();
      welcome = await core.connection.request(next, 'hello', { v: VERSION, ...hello, token: hello.token || undefined }, 'welcome');
    } catch (err) {
      if (moving.candidate === next) moving.candidate = null;
      next.close(1000, 'hello failed');
      throw err;
    }
    moving.candidate = null;
    if (core.state !== moving) {
      next.close(1000, 'client closed');
      throw closed();
    }
    const old = moving.transport;
    moving.transport = next;
    core.url = to;
    core.session = welcome.session;
    core.received = 1; // the new session's Welcome
    core.noteWelcome(welcome);
    // Status 1000 tells the old node we left on purpose: it holds no seat for a resume.
    old?.close(1000, 'moved to another node');
    core.events.emit('moved', { from, to, node: welcome.node, region: welcome.region || region });
  }
}
