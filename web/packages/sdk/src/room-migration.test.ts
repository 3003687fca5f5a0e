import { describe, expect, it } from 'vitest';
import type { Frame, RoomJoined } from '@hostrelay/protocol';
import { fakePeerFactory } from './fake-peer.test-util.js';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import { sdpSessionId } from './peer-link.js';
import { backoff } from './reconnect.js';
import { RoomSession, type Role, type RoomSessionOptions } from './room-session.js';

// Host migration and credential refresh as a RoomSession sees them: the
// server's hostChanged and iceRefresh events arrive over a scripted lobby,
// peer connections are the scripted fake (no WebRTC in node; e2e/ covers
// the real thing in Chromium).

const ice = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: '100:s', credential: 'old' }], ttl: 60 };
const fresh = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: '200:s', credential: 'new' }], ttl: 60 };
const room = { code: 'ABC2345', name: 'r', maxPlayers: 4, public: false, hasPassword: false, host: 'p1', mode: '', started: true, migrate: true, spectators: 0, membersOnly: false };
const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

function joined(you: string, players: string[]): RoomJoined {
  return { room, you, players: players.map((id) => ({ id, name: id, ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' })), ice };
}

/** An SDP with the `o=` line a browser writes; the session id is what ties renegotiations together. */
const sdp = (session: string, version: number): string => `v=0\r\no=- ${session} ${version} IN IP4 127.0.0.1\r\ns=-\r\n`;

async function setup(you: string, players: string[], hostLinkPolicy: RoomSessionOptions['hostLinkPolicy'] = null) {
  const server = FakeServer.welcoming();
  const signals: Frame[] = [];
  server.onFrame = (f) => {
    if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's' });
    if (f.t === 'signal') {
      signals.push(f);
      server.send('ok', f.id, {});
    }
  };
  const lobby = await LobbyClient.connect('ws://x/ws', you, { transport: server.factory });
  const peers = fakePeerFactory();
  const session = new RoomSession(lobby, joined(you, players), {
    createPeerConnection: peers.create,
    closeOnPageHide: false,
    hostLinkPolicy,
    spareAnswerer: false, // room-session.test.ts tests the spare
  });
  const events: string[] = [];
  session.on('peerOpen', (id) => events.push(`open ${id}`));
  session.on('peerClose', (id) => events.push(`close ${id}`));
  session.on('hostChanged', (c) => events.push(`host ${c.previous}→${c.host} as ${c.role}`));
  session.on('iceRefreshed', (n) => events.push(`refreshed ${n}`));
  session.on('error', (e) => events.push(`error ${e.code}`));
  await flush();
  const sent = (): { to: string; kind: string; sdp: string }[] =>
    signals.map((f) => f.b as { to: string; kind: string; sdp: string });
  return { server, session, peers, events, sent };
}

/** The server's migration: playerLeft for the old host, then hostChanged. */
function migrate(server: FakeServer, from: string, to: string): void {
  server.send('playerLeft', 0, { id: from, reason: 'left' });
  server.send('hostChanged', 0, { host: to, prev: from });
}

describe('host migration', () => {
  it('a client drops the old host and offers to the new one', async () => {
    const { server, session, peers, events, sent } = await setup('p3', ['p1', 'p2', 'p3']);
    const old = peers.made[0]!;
    old.openChannels();
    migrate(server, 'p1', 'p2');
    await flush();
    expect(old.closed).toBe(true);
    expect(session.hostId).toBe('p2');
    expect(session.role).toBe<Role>('client');
    expect(session.room.host).toBe('p2');
    expect(session.players.map((p) => p.id)).toEqual(['p2', 'p3']);
    expect(peers.made).toHaveLength(2);
    expect(sent().map((s) => [s.to, s.kind])).toEqual([
      ['p1', 'offer'],
      ['p2', 'offer'],
    ]);
    // Only the new host's signals count now.
    server.send('signal', 0, { to: 'p3', from: 'p1', kind: 'answer', sdp: 'stale' });
    server.send('signal', 0, { to: 'p3', from: 'p2', kind: 'answer', sdp: 'answer-sdp' });
    await flush();
    expect(peers.made[1]!.remoteDescription).toEqual({ type: 'answer', sdp: 'answer-sdp' });
    peers.made[1]!.openChannels();
    expect(session.openPeers).toEqual(['p2']);
    expect(events).toEqual(['open p1', 'close p1', 'host p1→p2 as client', 'open p2']);
  });

  it('the promoted client becomes the host and answers everyone', async () => {
    const { server, session, peers, events, sent } = await setup('p2', ['p1', 'p2', 'p3']);
    peers.made[0]!.openChannels();
    migrate(server, 'p1', 'p2');
    await flush();
    expect(session.role).toBe<Role>('host');
    expect(peers.made).toHaveLength(1); // no offer of its own
    server.send('signal', 0, { to: 'p2', from: 'p3', kind: 'offer', sdp: sdp('77', 2) });
    await flush();
    expect(peers.made).toHaveLength(2);
    expect(peers.made[1]!.remoteDescription?.sdp).toBe(sdp('77', 2));
    expect(sent().map((s) => [s.to, s.kind])).toEqual([
      ['p1', 'offer'],
      ['p3', 'answer'],
    ]);
    peers.made[1]!.openChannels();
    expect(session.openPeers).toEqual(['p3']);
    expect(events).toEqual(['open p1', 'close p1', 'host p1→p2 as host', 'open p3']);
  });

  it('a host change the session already knows, or after it closed, does nothing', async () => {
    const { server, session, peers, events } = await setup('p3', ['p1', 'p2', 'p3']);
    server.send('hostChanged', 0, { host: 'p1', prev: 'p0' });
    await flush();
    expect(peers.made).toHaveLength(1);
    session.close('left');
    migrate(server, 'p1', 'p2');
    await flush();
    expect(peers.made).toHaveLength(1);
    expect(events).toEqual([]);
  });
});

describe('credential refresh', () => {
  it('a client applies the new servers and restarts ICE on the same connection', async () => {
    const { server, session, peers, events, sent } = await setup('p2', ['p1', 'p2']);
    const pc = peers.made[0]!;
    server.send('signal', 0, { to: 'p2', from: 'p1', kind: 'answer', sdp: 'answer-sdp' });
    await flush();
    pc.openChannels();
    server.send('iceRefresh', 0, { ice: fresh });
    await flush();
    expect(pc.configurations).toEqual([
      { iceServers: [{ urls: fresh.servers[0]!.urls, username: '200:s', credential: 'new' }], iceTransportPolicy: 'relay' },
    ]);
    expect(pc.restartsAsked).toBe(1);
    expect(sent().map((s) => [s.to, s.kind, s.sdp])).toEqual([
      ['p1', 'offer', 'offer-sdp'],
      ['p1', 'offer', 'offer-sdp 1 ice-restart'],
    ]);
    // Candidates of the restart follow its offer; the channels never closed.
    pc.candidate('candidate:new 1 udp 1 127.0.0.1 6000 typ relay');
    await flush();
    expect(sent().at(-1)).toMatchObject({ kind: 'candidate' });
    expect(pc.closed).toBe(false);
    expect(session.openPeers).toEqual(['p1']);
    expect(session.iceRefreshes).toBe(1);
    expect(session.iceRestarts).toEqual([{ peerId: 'p1', restarts: 1 }]);
    expect(events).toEqual(['open p1', 'refreshed 1']);
  });

  it('a refresh that comes before the answer restarts once the answer is in', async () => {
    const { server, peers, sent } = await setup('p2', ['p1', 'p2']);
    const pc = peers.made[0]!;
    server.send('iceRefresh', 0, { ice: fresh });
    await flush();
    expect(sent().map((s) => s.sdp)).toEqual(['offer-sdp']);
    server.send('signal', 0, { to: 'p2', from: 'p1', kind: 'answer', sdp: 'answer-sdp' });
    await flush();
    expect(pc.restartsAsked).toBe(1);
    expect(sent().map((s) => s.sdp)).toEqual(['offer-sdp', 'offer-sdp 1 ice-restart']);
  });

  it('the host takes the new servers, answers a restart on the same connection, and gives new peers the new servers', async () => {
    const { server, session, peers, events, sent } = await setup('p1', ['p1', 'p2']);
    server.send('signal', 0, { to: 'p1', from: 'p2', kind: 'offer', sdp: sdp('42', 2) });
    await flush();
    const pc = peers.made[0]!;
    pc.openChannels();
    server.send('iceRefresh', 0, { ice: fresh });
    await flush();
    expect(pc.restartsAsked).toBe(0); // the offerer restarts, not the host
    expect(pc.config.iceServers).toEqual([{ urls: fresh.servers[0]!.urls, username: '200:s', credential: 'new' }]);
    // The client's restart offer: same o= session, next version.
    server.send('signal', 0, { to: 'p1', from: 'p2', kind: 'offer', sdp: sdp('42', 3) });
    await flush();
    expect(peers.made).toHaveLength(1);
    expect(pc.remoteDescription?.sdp).toBe(sdp('42', 3));
    expect(sent().map((s) => [s.to, s.kind])).toEqual([
      ['p2', 'answer'],
      ['p2', 'answer'],
    ]);
    expect(session.iceRestarts).toEqual([{ peerId: 'p2', restarts: 1 }]);

    // A new RTCPeerConnection at the client (another o= session) is a new connection.
    server.send('signal', 0, { to: 'p1', from: 'p2', kind: 'offer', sdp: sdp('43', 2) });
    await flush();
    expect(pc.closed).toBe(true);
    expect(peers.made).toHaveLength(2);
    expect(peers.made[1]!.config.iceServers).toEqual([{ urls: fresh.servers[0]!.urls, username: '200:s', credential: 'new' }]);
    expect(events).toEqual(['open p2', 'refreshed 1', 'close p2']);
  });

  it('a TURN refusal during a restart is reported without dropping the open connection', async () => {
    const { server, session, peers, events } = await setup('p2', ['p1', 'p2']);
    const pc = peers.made[0]!;
    pc.openChannels();
    server.send('iceRefresh', 0, { ice: fresh });
    pc.iceError(401, 'Unauthorized');
    await flush();
    expect(pc.closed).toBe(false);
    expect(session.openPeers).toEqual(['p1']);
    expect(events).toEqual(['open p1', 'refreshed 1', 'error ice_candidate_error']);
  });
});

describe('a dropped link to the host', () => {
  const soon = backoff({ initialMs: 1, maxMs: 1, jitter: 0, maxAttempts: 2 });
  const later = (): Promise<void> => new Promise((r) => setTimeout(r, 10));

  it('is offered again while the host is still in the room, until the policy gives up', async () => {
    const { peers, events, sent } = await setup('p2', ['p1', 'p2'], soon);
    peers.made[0]!.openChannels();
    // The host dropped our connection (say, it answered an ICE restart with a new one).
    peers.made[0]!.channel('game').onclose?.(new Event('close'));
    await later();
    expect(peers.made).toHaveLength(2);
    expect(sent().map((s) => [s.to, s.kind])).toEqual([
      ['p1', 'offer'],
      ['p1', 'offer'],
    ]);
    peers.made[1]!.openChannels();
    expect(events).toEqual(['open p1', 'close p1', 'open p1']);
    // Dropped again at once, and the next attempt fails before opening: the
    // policy allows two attempts in a row, then no more.
    peers.made[1]!.channel('game').onclose?.(new Event('close'));
    await later();
    expect(peers.made).toHaveLength(3);
    peers.made[2]!.channel('game').onclose?.(new Event('close'));
    await later();
    expect(peers.made).toHaveLength(3);
  });

  it('is not offered again when the host left or the session closed', async () => {
    const { server, session, peers } = await setup('p3', ['p1', 'p2', 'p3'], soon);
    peers.made[0]!.openChannels();
    migrate(server, 'p1', 'p2'); // playerLeft closes the link first: no offer to p1
    await later();
    expect(peers.made.map((p) => p.closed)).toEqual([true, false]);
    peers.made[1]!.openChannels();
    session.close('left');
    await later();
    expect(peers.made).toHaveLength(2);
  });

  it('is left alone with no policy', async () => {
    const { peers } = await setup('p2', ['p1', 'p2'], null);
    peers.made[0]!.openChannels();
    peers.made[0]!.channel('game').onclose?.(new Event('close'));
    await later();
    expect(peers.made).toHaveLength(1);
  });
});

describe('sdpSessionId', () => {
  it('reads the o= line and nothing else', () => {
    expect(sdpSessionId(sdp('4611731400430051336', 2))).toBe('4611731400430051336');
    expect(sdpSessionId('v=0\r\ns=-\r\n')).toBeNull();
  });
});
