import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_SPECTATOR_DATA, type Frame, type MessageMap, type RoomJoined, type RoomSummary } from '@hostrelay/protocol';

type SpectatorFrame = { id: number; b?: MessageMap['spectatorFrame'] };
import { fakePeerFactory } from './fake-peer.test-util.js';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import type { ReconnectPolicy } from './reconnect.js';
import { RoomSession } from './room-session.js';
import { SpectatorSession } from './spectator-session.js';

// Spectators over a scripted lobby server: watching (the keyframe that comes
// with the reply included), the end of a watch, spectator frames left out of
// the resume count, and the host's stream held to the server's limits.

const summary: RoomSummary = {
  code: 'ABC2345',
  name: 'Lunch league',
  host: 'Ada',
  players: 2,
  maxPlayers: 2,
  mode: 'Arena',
  hasPassword: false,
  started: true,
  region: '',
};

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
const now: ReconnectPolicy = { nextRetryDelayMs: (n) => (n <= 5 ? 0 : null) };

/** A server that answers spectate with `spectating` and at once the last keyframe and a delta, as the hub does. */
function spectatingServer(): FakeServer {
  const server = FakeServer.welcoming();
  server.onFrame = (f) => {
    if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's_test', maxFrame: 16384, resume: 'r1', grace: 20 });
    else if (f.t === 'spectate') {
      server.send('spectating', f.id, { room: summary, delayMs: 2000, maxData: MAX_SPECTATOR_DATA });
      server.send('spectatorFrame', 0, { key: true, data: new Uint8Array([1, 2, 3]) });
      server.send('spectatorFrame', 0, { data: new Uint8Array([4]) });
    } else if (f.id !== 0) server.send('ok', f.id, {});
  };
  return server;
}

describe('SpectatorSession', () => {
  it('watches: the keyframe sent with the reply, then deltas, then the end', async () => {
    const server = spectatingServer();
    const lobby = await LobbyClient.connect('ws://x/ws', '', { transport: server.factory });
    const watch = await SpectatorSession.watch(lobby, 'ABC2345', 'hunter2');
    const log: string[] = [];
    watch.on('frame', (data, { key }) => log.push(`${key ? 'key' : 'delta'} ${[...data].join(',')}`));
    watch.on('ended', (reason) => log.push(`ended ${reason}`));
    expect(server.received.find((f) => f.t === 'spectate')?.b).toEqual({ code: 'ABC2345', password: 'hunter2' });
    expect(watch.room).toEqual(summary);
    expect(watch.delayMs).toBe(2000);

    await tick();
    server.send('spectatorFrame', 0, { data: new Uint8Array([5]) });
    server.send('spectateEnded', 0, { reason: 'host_left' });
    server.send('spectatorFrame', 0, { key: true, data: new Uint8Array([6]) }); // after the end: not ours
    expect(log).toEqual(['key 1,2,3', 'delta 4', 'delta 5', 'ended host_left']);
    expect(watch.frames).toBe(3);
    expect(watch.ended).toBe('host_left');
  });

  it('close stops watching on the server and says stopped; a closed lobby says disconnected', async () => {
    const server = spectatingServer();
    const lobby = await LobbyClient.connect('ws://x/ws', '', { transport: server.factory });
    const watch = await SpectatorSession.watch(lobby, 'ABC2345');
    const ended: string[] = [];
    watch.on('ended', (r) => ended.push(r));
    watch.close();
    watch.close();
    expect(ended).toEqual(['stopped']);
    expect(server.received.filter((f) => f.t === 'stopSpectating')).toHaveLength(1);

    const second = await SpectatorSession.watch(lobby, 'ABC2345');
    second.on('ended', (r) => ended.push(r));
    server.drop(1006);
    expect(ended).toEqual(['stopped', 'disconnected']);
  });

  it('rejects with the server code when the room has no spectator seat', async () => {
    const server = FakeServer.welcoming();
    const hello = server.onFrame;
    server.onFrame = (f) => (f.t === 'spectate' ? server.send('error', f.id, { code: 'room_full', msg: 'no spectator seat left (100 of 100)' }) : hello(f));
    const lobby = await LobbyClient.connect('ws://x/ws', '', { transport: server.factory });
    await expect(SpectatorSession.watch(lobby, 'ABC2345')).rejects.toMatchObject({ code: 'room_full' });
  });

  it('leaves spectator frames out of the frames a resume counts', async () => {
    const hellos: Frame[] = [];
    const server = spectatingServer();
    const base = server.onFrame;
    server.onFrame = (f) => {
      if (f.t === 'hello' && f.b?.resume) {
        hellos.push(f);
        server.send('welcome', f.id, { v: 1, session: 's_test', resume: 'r2', grace: 20, resumed: true });
      } else base(f);
    };
    const lobby = await LobbyClient.connect('ws://x/ws', '', { transport: server.factory, resume: true, resumePolicy: now });
    await SpectatorSession.watch(lobby, 'ABC2345');
    server.send('spectatorFrame', 0, { data: new Uint8Array([7]) });
    server.send('chatMessage', 0, { from: 'p2', name: 'Bob', text: 'hi', at: 1 }); // numbered
    server.drop(1006);
    await tick();
    // welcome, spectating and chatMessage: 3; the three spectator frames are not numbered.
    expect(hellos.map((h) => h.b)).toEqual([expect.objectContaining({ resume: 'r1', received: 3 })]);
  });
});

describe('RoomSession.sendSpectatorFrame', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const joined = (you: string): RoomJoined => ({
    room: { code: 'ABC2345', name: 'r', maxPlayers: 2, public: true, hasPassword: false, host: 'p1', mode: 'Arena', started: true, migrate: false, spectators: 0, membersOnly: false },
    you,
    players: [
      { id: 'p1', name: 'Ada', ready: true, ping: 0, away: false, verified: false, userId: '', meta: '' },
      { id: 'p2', name: 'Bob', ready: true, ping: 0, away: false, verified: false, userId: '', meta: '' },
    ],
    ice: { servers: [], ttl: 60 },
  });

  async function setup(you = 'p1', maxFrame = 16384, options = {}) {
    const server = FakeServer.welcoming();
    server.onFrame = (f) => {
      if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's', maxFrame });
      else if (f.id !== 0) server.send('ok', f.id, {});
    };
    const lobby = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory });
    const session = new RoomSession(lobby, joined(you), { createPeerConnection: fakePeerFactory().create, closeOnPageHide: false, ...options });
    const sent = (): SpectatorFrame[] => server.received.flatMap((f) => (f.t === 'spectatorFrame' ? [{ ...f, b: f.b }] : []));
    return { server, lobby, session, sent };
  }

  it('sends one unanswered frame (id 0) with the key flag, data at the limit but not past it', async () => {
    const { session, sent, lobby } = await setup();
    expect(lobby.maxSpectatorData).toBe(MAX_SPECTATOR_DATA);
    expect(session.sendSpectatorFrame(new Uint8Array(MAX_SPECTATOR_DATA).fill(7), { keyframe: true })).toBe(true);
    expect(session.sendSpectatorFrame(new Uint8Array([1]))).toBe(true);
    expect(sent().map((f) => [f.id, f.b?.key, f.b?.data.length])).toEqual([
      [0, true, MAX_SPECTATOR_DATA],
      [0, false, 1],
    ]);
    expect(() => session.sendSpectatorFrame(new Uint8Array(MAX_SPECTATOR_DATA + 1), { keyframe: true })).toThrow(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining(`1 to ${MAX_SPECTATOR_DATA}`) }),
    );
    expect(() => session.sendSpectatorFrame(new Uint8Array(0))).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(sent()).toHaveLength(2);
  });

  it('takes a lower limit from a server with a smaller frame limit', async () => {
    const { session, lobby } = await setup('p1', 4096);
    expect(lobby.maxSpectatorData).toBe(4096 - 64);
    expect(session.sendSpectatorFrame(new Uint8Array(4096 - 64), { keyframe: true })).toBe(true);
    expect(() => session.sendSpectatorFrame(new Uint8Array(4096 - 63))).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  it('is for the host only', async () => {
    const { session } = await setup('p2');
    expect(() => session.sendSpectatorFrame(new Uint8Array([1]), { keyframe: true })).toThrow(expect.objectContaining({ code: 'forbidden' }));
    session.close();
  });

  it('refuses past the rate, then deltas until a keyframe; the bucket refills with time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const { session, sent } = await setup('p1', 16384, { spectatorFramesPerSecond: 20 });
    const data = new Uint8Array([1]);
    for (let i = 0; i < 20; i++) expect(session.sendSpectatorFrame(data, { keyframe: i === 0 }), `frame ${i}`).toBe(true);
    expect(session.sendSpectatorFrame(data, { keyframe: true })).toBe(false); // the 21st in the same instant
    expect(session.refusedSpectatorFrameCount).toBe(1);
    vi.setSystemTime(1_000_000 + 100); // two tokens back
    expect(session.sendSpectatorFrame(data)).toBe(false); // a delta after a refusal: useless to spectators
    expect(session.sendSpectatorFrame(data, { keyframe: true })).toBe(true);
    expect(session.sendSpectatorFrame(data)).toBe(true);
    expect(session.sendSpectatorFrame(data)).toBe(false);
    expect(sent()).toHaveLength(22);
    expect(session.refusedSpectatorFrameCount).toBe(3);
    vi.setSystemTime(1_000_000 + 60_000); // a full bucket, never more
    let n = 0;
    while (session.sendSpectatorFrame(data, { keyframe: true })) n++;
    expect(n).toBe(20);
  });
});
