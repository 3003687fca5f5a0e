import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Frame, Player, Signal } from '@hostrelay/protocol';
import { LobbyError } from './errors.js';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';

const joined = {
  room: { code: 'ABC2345', name: 'r', maxPlayers: 4, public: true, hasPassword: false, host: 'p1', mode: '', started: false, migrate: false, spectators: 0, membersOnly: false },
  you: 'p2',
  players: [
    { id: 'p1', name: 'Ada', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' },
    { id: 'p2', name: 'Grace', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' },
  ],
  ice: { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u', credential: 'c' }], ttl: 60 },
};

afterEach(() => {
  vi.useRealTimers();
});

describe('LobbyClient.connect', () => {
  it('says hello with an id and resolves on welcome', async () => {
    const server = FakeServer.welcoming();
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory });
    expect(server.received[0]).toEqual({ t: 'hello', id: 1, b: { v: 1, name: 'Ada', device: '', pings: false, resume: '', received: 0, token: '' } });
    expect(client.session).toBe('s_test');
    expect(client.connected).toBe(true);
  });

  it('rejects with unreachable when the socket closes before opening', async () => {
    const server = new FakeServer();
    const p = LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory });
    server.drop(1006);
    await expect(p).rejects.toMatchObject({ code: 'unreachable' });
  });

  it('rejects with the server error code', async () => {
    const server = FakeServer.welcoming();
    server.onFrame = (f) => server.send('error', f.id, { code: 'unsupported_version', msg: 'reload' });
    await expect(LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory })).rejects.toEqual(
      new LobbyError('unsupported_version', 'reload'),
    );
    expect(server.closed).toBe(true);
  });

  it('times out when nobody answers', async () => {
    vi.useFakeTimers();
    const server = new FakeServer();
    const p = LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory, connectTimeoutMs: 500 });
    const check = expect(p).rejects.toMatchObject({ code: 'unreachable' });
    await vi.advanceTimersByTimeAsync(600);
    await check;
  });
});

describe('LobbyClient requests', () => {
  async function connected(): Promise<[LobbyClient, FakeServer]> {
    const server = FakeServer.welcoming();
    const client = await LobbyClient.connect('ws://x/ws', 'Grace', { transport: server.factory, requestTimeoutMs: 1000 });
    return [client, server];
  }

  it('correlates replies by id, whatever their order', async () => {
    const [client, server] = await connected();
    const held: Frame[] = [];
    server.onFrame = (f) => held.push(f);
    const join = client.joinRoom('ABC2345', 'pw');
    const leave = client.leaveRoom();
    expect(held.map((f) => [f.t, f.id])).toEqual([
      ['joinRoom', 2],
      ['leaveRoom', 3],
    ]);
    expect(held[0]?.b).toEqual({ code: 'ABC2345', password: 'pw' });
    expect('b' in held[1]!).toBe(false);
    server.send('ok', 3, {});
    server.send('roomJoined', 2, joined);
    await expect(join).resolves.toEqual(joined);
    await expect(leave).resolves.toBeUndefined();
  });

  it('sends createRoom with Go field order and omitted zero values', async () => {
    const [client, server] = await connected();
    server.onFrame = (f) => server.send('roomJoined', f.id, { ...joined, you: 'p1' });
    await client.createRoom({ name: 'Friday', maxPlayers: 8, public: false });
    expect(server.received[1]).toEqual({
      t: 'createRoom',
      id: 2,
      b: { name: 'Friday', maxPlayers: 8, public: false, password: '', mode: '', migrate: false, region: '', membersOnly: false },
    });
  });

  it('rejects with LobbyError codes', async () => {
    const [client, server] = await connected();
    server.onFrame = (f) => server.send('error', f.id, { code: 'wrong_password', msg: 'room needs a password' });
    const err = await client.joinRoom('ABC2345').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LobbyError);
    expect(err).toMatchObject({ code: 'wrong_password', message: 'room needs a password' });
  });

  it('times out a request without reply and ignores the late reply', async () => {
    const [client, server] = await connected();
    vi.useFakeTimers();
    const p = client.leaveRoom();
    const check = expect(p).rejects.toMatchObject({ code: 'timeout' });
    await vi.advanceTimersByTimeAsync(1001);
    await check;
    server.send('ok', 2, {});
  });

  it('rejects pending requests when the connection drops, then emits close', async () => {
    const [client, server] = await connected();
    const close = vi.fn();
    client.on('close', close);
    const p = client.sendSignal({ to: 'p1', kind: 'offer', sdp: 'v=0' });
    server.drop(1001, 'going away');
    await expect(p).rejects.toMatchObject({ code: 'closed' });
    expect(close).toHaveBeenCalledWith({ code: 1001, reason: 'going away', error: null });
    expect(client.connected).toBe(false);
    await expect(client.leaveRoom()).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('LobbyClient events', () => {
  it('emits room events and signals', async () => {
    const server = FakeServer.welcoming();
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory });
    const players: Player[] = [];
    const signals: Signal[] = [];
    const left = vi.fn();
    const closed = vi.fn();
    const errors: LobbyError[] = [];
    client.on('playerJoined', (p) => players.push(p));
    client.on('playerLeft', left);
    client.on('roomClosed', closed);
    client.on('signal', (s) => signals.push(s));
    client.on('error', (e) => errors.push(e));

    server.send('playerJoined', 0, { player: { id: 'p3', name: 'Linus', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' } });
    server.send('signal', 0, { to: 'p1', from: 'p3', kind: 'candidate' });
    server.send('playerLeft', 0, { id: 'p3', reason: 'disconnected' });
    server.send('roomClosed', 0, { reason: 'host_left' });
    server.send('error', 0, { code: 'rate_limited', msg: 'slow down' });
    server.handlers?.message(new Uint8Array([0xc1]).buffer);
    server.handlers?.message(new Uint8Array([0x81, 0xa1, 0x74, 0xa3, 0x66, 0x6f, 0x6f]).buffer); // unknown type: skipped

    expect(players).toEqual([{ id: 'p3', name: 'Linus', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' }]);
    expect(signals).toEqual([{ to: 'p1', from: 'p3', kind: 'candidate', sdp: '', cand: '', mid: '' }]);
    expect(left).toHaveBeenCalledWith({ id: 'p3', reason: 'disconnected' });
    expect(closed).toHaveBeenCalledWith({ reason: 'host_left' });
    expect(errors.map((e) => e.code)).toEqual(['rate_limited', 'protocol']);
  });
});
