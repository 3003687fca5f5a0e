import { describe, expect, it } from 'vitest';
import type { Frame } from '@hostrelay/protocol';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import type { ReconnectPolicy } from './reconnect.js';

// Taking a held seat back after the connection drops: the hello that
// resumes, the frame count the server replays from, requests that outlive
// the drop, and giving up when the server no longer holds the seat.

const now: ReconnectPolicy = { nextRetryDelayMs: (n) => (n <= 5 ? 0 : null) };
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

/** A server whose welcomes carry resume tokens r1, r2…; `onResume` answers each resuming hello. */
function resumingServer(onResume: (server: FakeServer, hello: Frame) => void): FakeServer {
  const server = FakeServer.welcoming();
  let token = 0;
  server.onFrame = (f) => {
    if (f.t !== 'hello') return server.send('ok', f.id, {});
    if (f.b?.resume) return onResume(server, f);
    server.send('welcome', f.id, { v: 1, session: 's_test', maxFrame: 16384, resume: `r${++token}`, grace: 20 });
  };
  return server;
}

describe('LobbyClient resume', () => {
  it('takes the seat back with the frame count, replays, and keeps requests in flight', async () => {
    const hellos: unknown[] = [];
    const server = resumingServer((s, hello) => {
      hellos.push(hello.b);
      s.send('welcome', hello.id, { v: 1, session: 's_test', resume: `r${hellos.length + 1}`, grace: 20, resumed: true });
      // The reply to the request sent before the drop, and an event missed meanwhile.
      s.send('ok', 2, {});
      s.send('playerJoined', 0, { player: { id: 'p3', name: 'Linus', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' } });
    });
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory, resume: true, resumePolicy: now });
    const log: string[] = [];
    client.on('reconnecting', ({ attempt, code }) => log.push(`reconnecting ${attempt} ${code}`));
    client.on('resumed', () => log.push('resumed'));
    client.on('close', () => log.push('close'));
    client.on('playerJoined', (p) => log.push(`joined ${p.name}`));

    server.send('chatMessage', 0, { from: 'p2', name: 'Bob', text: 'hi', at: 1 });
    server.onFrame = ((inner) => (f: Frame) => (f.t === 'setReady' ? undefined : inner(f)))(server.onFrame);
    const ready = client.setReady(true); // its reply is lost with the connection
    server.drop(1006);
    expect(client.connected).toBe(false);
    await expect(client.sendChat('during')).rejects.toMatchObject({ code: 'closed' });
    await tick();
    await expect(ready).resolves.toBeUndefined();
    expect(log).toEqual(['reconnecting 1 1006', 'resumed', 'joined Linus']);
    expect(client.connected).toBe(true);
    // welcome + chatMessage before the drop; the resumed welcome does not count.
    expect(hellos).toEqual([{ v: 1, name: '', device: '', pings: false, resume: 'r1', received: 2, token: '' }]);

    // A second drop resumes with the next token and counts the replayed frames.
    server.drop(1006);
    await tick();
    expect(hellos[1]).toMatchObject({ resume: 'r2', received: 4 });
  });

  it('gives up when the server no longer holds the seat', async () => {
    const server = resumingServer((s, hello) => s.send('error', hello.id, { code: 'resume_failed', msg: 'seat released' }));
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory, resume: true, resumePolicy: now });
    const closed: string[] = [];
    client.on('close', ({ reason }) => closed.push(reason));
    server.drop(1006);
    await tick();
    expect(closed).toEqual(['the server no longer holds our seat']);
    expect(client.connected).toBe(false);
  });

  it('gives up when the policy says so', async () => {
    const server = resumingServer(() => undefined);
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', {
      transport: server.factory,
      resume: true,
      resumePolicy: { nextRetryDelayMs: () => null },
    });
    const closed: number[] = [];
    client.on('close', ({ code }) => closed.push(code));
    server.drop(1006);
    expect(closed).toEqual([1006]);
  });

  it('does not resume after close() or without the option', async () => {
    const plain = resumingServer(() => undefined);
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: plain.factory });
    const events: string[] = [];
    client.on('reconnecting', () => events.push('reconnecting'));
    client.on('close', () => events.push('close'));
    plain.drop(1006);
    expect(events).toEqual(['close']);

    const server = resumingServer(() => undefined);
    const mine = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory, resume: true, resumePolicy: now });
    const seen: string[] = [];
    mine.on('reconnecting', () => seen.push('reconnecting'));
    mine.on('close', () => seen.push('close'));
    mine.close();
    server.drop(1000);
    await tick();
    expect(seen).toEqual(['close']);
  });
});
