import { describe, expect, it } from 'vitest';
import type { Frame } from '@hostrelay/protocol';
import { FakeCluster } from '../fake-cluster.test-util.js';
import { FakeServer } from '../fake-transport.test-util.js';
import { LobbyClient } from '../lobby-client.js';
import type { ReconnectPolicy } from '../reconnect.js';
import type { LobbyCore, LobbyState } from './core.js';

// The client's one state (lobby/core.ts) from the inside: which kind it is
// in after each step, and that closed is the end whatever comes after.

const now: ReconnectPolicy = { nextRetryDelayMs: (n) => (n <= 5 ? 0 : null) };
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
const stateOf = (client: LobbyClient): LobbyState => (client as unknown as { core: LobbyCore }).core.state;
const kindOf = (client: LobbyClient): LobbyState['kind'] => stateOf(client).kind;

/** A server whose welcomes carry resume tokens; a resuming hello is answered by `onResume`. */
function resumingServer(onResume: (server: FakeServer, hello: Frame) => void): FakeServer {
  const server = FakeServer.welcoming();
  server.onFrame = (f) => {
    if (f.t !== 'hello') return server.send('ok', f.id, {});
    if (f.b?.resume) return onResume(server, f);
    server.send('welcome', f.id, { v: 1, session: 's_test', resume: 'r1', grace: 20 });
  };
  return server;
}

describe('LobbyClient state', () => {
  it('open after connect, closed after close(), and a late drop changes nothing', async () => {
    const server = resumingServer(() => undefined);
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory, resume: true, resumePolicy: now });
    expect(kindOf(client)).toBe('open');
    const closes: number[] = [];
    client.on('close', ({ code }) => closes.push(code));
    client.close();
    expect(kindOf(client)).toBe('closed');
    server.drop(1006);
    await tick();
    expect([kindOf(client), closes]).toEqual(['closed', [1000]]);
  });

  it('open → resuming (attempt by attempt) → open', async () => {
    let attempts = 0;
    const server = resumingServer((s, hello) => {
      if (++attempts > 1) s.send('welcome', hello.id, { v: 1, session: 's_test', resume: 'r2', grace: 20, resumed: true });
      else s.drop(1006); // this attempt's connection drops too
    });
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory, resume: true, resumePolicy: now });
    const seen: string[] = [];
    client.on('reconnecting', ({ attempt }) => seen.push(`${kindOf(client)} ${attempt}`));
    const resumed = new Promise<void>((resolve) =>
      client.on('resumed', () => {
        seen.push(`resumed ${kindOf(client)}`);
        resolve();
      }),
    );

    server.drop(1006);
    expect(stateOf(client)).toMatchObject({ kind: 'resuming', attempt: 1, transport: null, url: 'ws://x/ws' });
    await resumed;
    expect(seen).toEqual(['resuming 1', 'resuming 2', 'resumed open']);
    expect(kindOf(client)).toBe('open');
  });

  it('resuming → closed when the policy gives up, with no timer left behind', async () => {
    const server = resumingServer((s) => s.drop(1006));
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', {
      transport: server.factory,
      resume: true,
      resumePolicy: { nextRetryDelayMs: (n) => (n <= 2 ? 0 : null) },
    });
    const closes: number[] = [];
    const closed = new Promise<void>((resolve) =>
      client.on('close', ({ code }) => {
        closes.push(code);
        resolve();
      }),
    );
    server.drop(1006);
    await closed;
    await tick(); // nothing after the close: no timer fires another attempt
    expect([kindOf(client), closes]).toEqual(['closed', [1006]]);
  });

  it('open → moving (old connection, then the candidate) → open on the new node', async () => {
    const cluster = new FakeCluster();
    let bHello: Frame | null = null;
    const b = cluster.node('b', 'eu', (f, n) => n.server.send('ok', f.id, {}));
    const bWelcome = b.server.onFrame;
    b.server.onFrame = (f) => (f.t === 'hello' ? (bHello = f) : bWelcome(f)); // b's Welcome waits
    const a = cluster.node('a', 'us', (f, n) =>
      n.server.send('error', f.id, { code: 'room_elsewhere', msg: 'on b', url: b.url, region: 'eu' }),
    );
    const client = await LobbyClient.connect(a.url, 'Ada', { transport: cluster.factory });
    const ready = client.setReady(true);
    await tick();

    const moving = stateOf(client);
    expect(moving.kind).toBe('moving');
    if (moving.kind !== 'moving') return;
    expect(moving.candidate).not.toBeNull();
    expect(moving.transport).not.toBeNull(); // a's, until b welcomes us
    expect(client.connected).toBe(true);

    b.server.onFrame = bWelcome;
    bWelcome(bHello!);
    await expect(ready).resolves.toBeUndefined();
    expect(stateOf(client)).toMatchObject({ kind: 'open' });
    expect(client.url).toBe(b.url);
  });

  it('moving → closed when the old connection dropped and the new node cannot be reached', async () => {
    const cluster = new FakeCluster();
    let readyId = 0;
    const a = cluster.node('a', 'us', (f, n) => {
      if (f.t === 'setReady') readyId = f.id; // never answered: the move waits for it
      else n.server.send('error', f.id, { code: 'room_elsewhere', msg: 'gone', url: 'ws://gone.test/ws' });
    });
    const client = await LobbyClient.connect(a.url, 'Ada', { transport: cluster.factory, resume: true, resumePolicy: now });
    const closes: string[] = [];
    client.on('close', ({ reason }) => closes.push(reason));
    const ready = client.setReady(true);
    const join = client.joinRoom('ABC2345');
    await tick();
    expect(readyId).toBeGreaterThan(0);
    expect(stateOf(client)).toMatchObject({ kind: 'moving' });

    a.server.drop(1006); // no resume while moving: the move owns what comes next
    expect(stateOf(client)).toMatchObject({ kind: 'moving', transport: null });
    await expect(ready).rejects.toMatchObject({ code: 'closed' });
    await expect(join).rejects.toMatchObject({ code: 'unreachable' });
    expect(kindOf(client)).toBe('closed');
    expect(closes).toEqual(['lost the lobby connection while moving to ws://gone.test/ws']);
  });
});
