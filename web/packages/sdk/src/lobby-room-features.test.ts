import { describe, expect, it } from 'vitest';
import type { ChatMessage, Frame, Player, RoomInfo, RoomSummary } from '@hostrelay/protocol';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import { backoff } from './reconnect.js';
import { RoomDirectory } from './room-directory.js';

// The lobby's room features over a scripted server: each request's wire form
// and reply, and each event reaching its listener.

async function connected(options: { device?: string; pings?: boolean } = {}): Promise<[LobbyClient, FakeServer]> {
  const server = FakeServer.welcoming();
  const client = await LobbyClient.connect('ws://x/ws', '', { transport: server.factory, ...options });
  server.onFrame = (f) => {
    if (f.t !== 'watchRooms') server.send('ok', f.id, {});
  };
  return [client, server];
}

const summary = (code: string, players = 1): RoomSummary => ({
  code,
  name: `room ${code}`,
  host: 'Ada',
  players,
  maxPlayers: 4,
  mode: '',
  hasPassword: false,
  started: false,
  region: '',
});

describe('LobbyClient room features', () => {
  it('sends device and pings in hello, and a name may come later', async () => {
    const [client, server] = await connected({ device: 'dev_0123456789abcdef', pings: true });
    expect(server.received[0]?.b).toEqual({ v: 1, name: '', device: 'dev_0123456789abcdef', pings: true, resume: '', received: 0, token: '' });
    await client.setName('  Ada ');
    expect(client.name).toBe('Ada');
    expect(server.received[1]).toEqual({ t: 'setName', id: 2, b: { name: '  Ada ' } });
  });

  it('writes each request as the protocol says', async () => {
    const [client, server] = await connected();
    await client.setReady(true);
    await client.kick('p2');
    await client.startGame();
    await client.sendChat('<b>hi</b>');
    await client.updateRoom({ name: 'r', maxPlayers: 4, public: true, mode: 'Teams' });
    await client.updateRoom({ name: 'r', maxPlayers: 4, public: false, password: '' });
    const sent = server.received.slice(1).map((f: Frame) => [f.t, f.b]);
    expect(sent).toEqual([
      ['setReady', { ready: true }],
      ['kick', { id: 'p2', ban: false }],
      ['startGame', undefined],
      ['chat', { text: '<b>hi</b>' }],
      ['updateRoom', { name: 'r', maxPlayers: 4, public: true, mode: 'Teams', password: '', setPassword: false }],
      ['updateRoom', { name: 'r', maxPlayers: 4, public: false, mode: '', password: '', setPassword: true }],
    ]);
  });

  it('rejects a host-only request with the server code', async () => {
    const [client, server] = await connected();
    server.onFrame = (f) => server.send('error', f.id, { code: 'forbidden', msg: 'only the host may kick players' });
    await expect(client.kick('p1')).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('emits the room events', async () => {
    const [client, server] = await connected();
    const seen: unknown[] = [];
    client.on('playerUpdated', (p: Player) => seen.push(['player', p.name, p.ready, p.ping]));
    client.on('roomUpdated', (r: RoomInfo) => seen.push(['room', r.name, r.started]));
    client.on('gameStarted', (g) => seen.push(['started', g.mode]));
    client.on('chatMessage', (m: ChatMessage) => seen.push(['chat', m.name, m.text, m.at]));
    client.on('roomClosed', (e) => seen.push(['closed', e.reason]));
    server.send('playerUpdated', 0, { player: { id: 'p2', name: 'Grace', ready: true, ping: 12, away: false, verified: false, userId: '', meta: '' } });
    server.send('roomUpdated', 0, { room: { code: 'ABC2345', name: 'new', maxPlayers: 4, public: true, hasPassword: false, host: 'p1', mode: '', started: true, migrate: false, spectators: 0, membersOnly: false } });
    server.send('gameStarted', 0, { mode: 'Teams' });
    server.send('chatMessage', 0, { from: 'p2', name: 'Grace', text: '<img src=x>', at: 5 });
    server.send('roomClosed', 0, { reason: 'kicked' });
    expect(seen).toEqual([
      ['player', 'Grace', true, 12],
      ['room', 'new', true],
      ['started', 'Teams'],
      ['chat', 'Grace', '<img src=x>', 5],
      ['closed', 'kicked'],
    ]);
  });
});

describe('RoomDirectory', () => {
  it('takes the snapshot, then applies deletions before sets', async () => {
    const [client, server] = await connected();
    server.onFrame = (f) => {
      if (f.t !== 'watchRooms') return server.send('ok', f.id, {});
      server.send('roomList', f.id, { rooms: [summary('AAAAAAA'), summary('BBBBBBB')] });
      // The rest of a long list follows the reply at once.
      server.send('roomListUpdate', 0, { set: [summary('CCCCCCC')] });
    };
    const dir = await RoomDirectory.watch(client);
    await Promise.resolve();
    expect(dir.rooms.map((r) => r.code)).toEqual(['AAAAAAA', 'BBBBBBB', 'CCCCCCC']);

    const changes: string[][] = [];
    dir.on('change', (rooms) => changes.push(rooms.map((r) => `${r.code}:${r.players}`)));
    server.send('roomListUpdate', 0, { del: ['AAAAAAA'], set: [summary('BBBBBBB', 3)] });
    server.send('roomListUpdate', 0, { del: ['CCCCCCC', 'ZZZZZZZ'] });
    expect(changes).toEqual([['BBBBBBB:3', 'CCCCCCC:1'], ['BBBBBBB:3']]);

    await dir.close();
    server.send('roomListUpdate', 0, { set: [summary('DDDDDDD')] });
    expect(changes).toHaveLength(2);
    expect(server.received.at(-1)?.t).toBe('unwatchRooms');
  });
});

describe('backoff', () => {
  it('grows to its cap and gives up after maxAttempts', () => {
    const p = backoff({ initialMs: 100, maxMs: 1000, maxAttempts: 6, jitter: 0 });
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => p.nextRetryDelayMs(n))).toEqual([100, 200, 400, 800, 1000, 1000, null]);
  });

  it('spreads delays by the jitter', () => {
    const low = backoff({ initialMs: 1000, jitter: 0.5, random: () => 0 });
    const high = backoff({ initialMs: 1000, jitter: 0.5, random: () => 0.999999 });
    expect(low.nextRetryDelayMs(1)).toBe(500);
    expect(high.nextRetryDelayMs(1)).toBe(1500);
  });
});
