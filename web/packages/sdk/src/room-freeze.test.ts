import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Frame, RoomJoined } from '@hostrelay/protocol';
import { fakePeerFactory } from './fake-peer.test-util.js';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import { HOST_SILENCE_MS, RoomSession, type RoomSessionOptions } from './room-session.js';

// A frozen host (docs/protocol.md, Frozen hosts) as the SDK sees it, on
// simulated time: clients report a silent host, the host answers the
// server's check from its message handler, a replaced host is told.

const ice = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: '100:s', credential: 'c' }], ttl: 60 };
const room = { code: 'ABC2345', name: 'r', maxPlayers: 4, public: false, hasPassword: false, host: 'p1', mode: '', started: true, migrate: true, spectators: 0, membersOnly: false };

function joined(you: string, players: string[], migrate: boolean, started: boolean): RoomJoined {
  const p = players.map((id) => ({ id, name: id, ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' }));
  return { room: { ...room, migrate, started }, you, players: p, ice };
}

async function setup(you: string, options: { migrate?: boolean; started?: boolean; refuse?: string } & RoomSessionOptions = {}) {
  const server = FakeServer.welcoming();
  server.onFrame = (f) => {
    if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's' });
    else if (f.t === 'hostSilent' && options.refuse) server.send('error', f.id, { code: options.refuse, msg: 'no' });
    else if (f.id !== 0) server.send('ok', f.id, {});
  };
  const lobby = await LobbyClient.connect('ws://x/ws', you, { transport: server.factory });
  const peers = fakePeerFactory();
  const session = new RoomSession(lobby, joined(you, ['p1', 'p2', 'p3'], options.migrate ?? true, options.started ?? true), {
    createPeerConnection: peers.create,
    closeOnPageHide: false,
    hostLinkPolicy: null,
    spareAnswerer: false,
    ...options,
  });
  const events: string[] = [];
  session.on('hostSilent', (e) => events.push(`silent ${e.host} ${e.silentMs}`));
  session.on('hostReplaced', (e) => events.push(`replaced by ${e.host} (${e.reason})`));
  session.on('closed', (reason) => events.push(`closed ${reason}`));
  await vi.advanceTimersByTimeAsync(0);
  const reports = (): string[] => server.received.filter((f: Frame) => f.t === 'hostSilent').map((f) => (f.b as { host: string }).host);
  /** A packet from the host on the game channel. */
  const fromHost = (): void => peers.made[0]!.channel('game').receive(new ArrayBuffer(4));
  return { server, lobby, session, peers, events, reports, fromHost };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a silent host', () => {
  it('is reported after HOST_SILENCE_MS of silence, and again every HOST_SILENCE_MS while it lasts', async () => {
    const { peers, events, reports, fromHost } = await setup('p2');
    peers.made[0]!.openChannels();
    // Nothing heard yet (a room before its game): nothing to report.
    await vi.advanceTimersByTimeAsync(10 * HOST_SILENCE_MS);
    expect(reports()).toEqual([]);
    fromHost();
    // A host heard every 2.9 s (a hidden tab at worst sends once a second) is never reported.
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS - 100);
      fromHost();
    }
    expect(reports()).toEqual([]);
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS - 1);
    expect(reports()).toEqual([]);
    // The watch looks every third of the period: the report is at most 1 s late.
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS / 3);
    expect(reports()).toEqual(['p1']);
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS);
    expect(reports()).toEqual(['p1', 'p1']);
    fromHost();
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS - 100);
    expect(reports()).toEqual(['p1', 'p1']);
    expect(events).toEqual([`silent p1 ${HOST_SILENCE_MS}`, `silent p1 ${2 * HOST_SILENCE_MS}`]);
  });

  it('is watched only once the game started: a room before it is quiet by nature', async () => {
    const { server, peers, reports, fromHost } = await setup('p2', { started: false });
    peers.made[0]!.openChannels();
    fromHost();
    await vi.advanceTimersByTimeAsync(10 * HOST_SILENCE_MS);
    expect(reports()).toEqual([]);
    server.send('gameStarted', 0, { mode: '' });
    fromHost();
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS);
    expect(reports()).toEqual(['p1']);
  });

  it('is not watched in a room without migrate, or with hostSilenceMs null', async () => {
    for (const opts of [{ migrate: false }, { hostSilenceMs: null }]) {
      const { peers, reports, fromHost } = await setup('p2', opts);
      peers.made[0]!.openChannels();
      fromHost();
      await vi.advanceTimersByTimeAsync(10 * HOST_SILENCE_MS);
      expect(reports()).toEqual([]);
    }
  });

  it('stops reporting when the server refuses for good, not when it only rate-limits', async () => {
    const limited = await setup('p2', { refuse: 'rate_limited' });
    limited.peers.made[0]!.openChannels();
    limited.fromHost();
    await vi.advanceTimersByTimeAsync(3 * HOST_SILENCE_MS);
    expect(limited.reports()).toHaveLength(3);
    const refused = await setup('p2', { refuse: 'forbidden' });
    refused.peers.made[0]!.openChannels();
    refused.fromHost();
    await vi.advanceTimersByTimeAsync(3 * HOST_SILENCE_MS);
    refused.fromHost();
    await vi.advanceTimersByTimeAsync(3 * HOST_SILENCE_MS);
    expect(refused.reports()).toHaveLength(1);
  });

  it('after a migration, the new host is watched from the change on', async () => {
    const { server, peers, reports, fromHost } = await setup('p3');
    peers.made[0]!.openChannels();
    fromHost();
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS - 500);
    server.send('playerLeft', 0, { id: 'p1', reason: 'unresponsive' });
    server.send('hostChanged', 0, { host: 'p2', prev: 'p1' });
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS - 1);
    expect(reports()).toEqual([]);
    await vi.advanceTimersByTimeAsync(HOST_SILENCE_MS / 3);
    expect(reports()).toEqual(['p2']);
  });
});

describe('the host', () => {
  it('answers the server’s check from the message handler, before any timer runs', async () => {
    const { server } = await setup('p1');
    server.send('hostCheck', 0, { nonce: 4_000_000_000 });
    const answers = server.received.filter((f) => f.t === 'hostAlive');
    expect(answers).toEqual([{ t: 'hostAlive', id: 0, b: { nonce: 4_000_000_000 } }]);
  });

  it('once replaced, hears hostReplaced and its session closes as unresponsive', async () => {
    const { server, session, peers, events } = await setup('p1');
    server.send('signal', 0, { to: 'p1', from: 'p2', kind: 'offer', sdp: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\n' });
    await vi.advanceTimersByTimeAsync(0);
    server.send('hostReplaced', 0, { room: 'OTHER99', host: 'p9', reason: 'unresponsive' });
    expect(session.closed).toBe(false);
    server.send('hostReplaced', 0, { room: 'ABC2345', host: 'p2', reason: 'unresponsive' });
    expect(session.closed).toBe(true);
    expect(peers.made.every((p) => p.closed)).toBe(true);
    expect(events).toEqual(['replaced by p2 (unresponsive)', 'closed unresponsive']);
  });
});
