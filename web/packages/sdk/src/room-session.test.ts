import { describe, expect, it } from 'vitest';
import type { Frame, RoomJoined } from '@hostrelay/protocol';
import type { PeerError } from './errors.js';
import { fakePeerFactory, type FakePeerConnection } from './fake-peer.test-util.js';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import { RoomSession } from './room-session.js';

const ice = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u', credential: 'c' }], ttl: 60 };
const room = { code: 'ABC2345', name: 'r', maxPlayers: 4, public: false, hasPassword: false, host: 'p1', mode: '', started: false, migrate: false, spectators: 0, membersOnly: false };

function joined(you: string, players: string[]): RoomJoined {
  return { room, you, players: players.map((id) => ({ id, name: id.toUpperCase(), ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' })), ice };
}

const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

async function setup(you: string, players: string[], connectTimeoutMs = 5_000) {
  const server = FakeServer.welcoming();
  const signals: Frame[] = [];
  server.onFrame = (f) => {
    if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's' });
    if (f.t === 'signal') {
      signals.push(f);
      server.send('ok', f.id, {});
    }
    if (f.t === 'leaveRoom') server.send('ok', f.id, {});
  };
  const lobby = await LobbyClient.connect('ws://x/ws', you, { transport: server.factory });
  const peers = fakePeerFactory();
  const session = new RoomSession(lobby, joined(you, players), {
    createPeerConnection: peers.create,
    closeOnPageHide: false,
    spareAnswerer: false, // the spare has its own tests below
    maxBufferedGame: 1000,
    connectTimeoutMs,
  });
  const events: string[] = [];
  const errors: PeerError[] = [];
  session.on('peerOpen', (id) => events.push(`open ${id}`));
  session.on('peerClose', (id) => events.push(`close ${id}`));
  session.on('playerJoined', (p) => events.push(`joined ${p.id}`));
  session.on('playerLeft', (p, why) => events.push(`left ${p.id} ${why}`));
  session.on('closed', (why) => events.push(`closed ${why}`));
  session.on('error', (e) => errors.push(e as PeerError));
  session.on('message', (id, data, ch) => events.push(`message ${id} ${ch} ${String(data)}`));
  await flush();
  const signalBodies = (): unknown[] => signals.map((f) => f.b);
  return { server, lobby, session, peers, events, errors, signalBodies };
}

function only(made: FakePeerConnection[]): FakePeerConnection {
  expect(made).toHaveLength(1);
  return made[0]!;
}

describe('RoomSession as a client', () => {
  it('offers to the host over a relay-only connection with two negotiated channels', async () => {
    const { session, peers, signalBodies } = await setup('p2', ['p1', 'p2']);
    expect(session.role).toBe('client');
    const pc = only(peers.made);
    expect(pc.config).toEqual({
      iceServers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u', credential: 'c' }],
      iceTransportPolicy: 'relay',
    });
    expect(pc.channels.map((c) => [c.label, c.init])).toEqual([
      ['game', { negotiated: true, id: 0, ordered: false, maxRetransmits: 0 }],
      ['events', { negotiated: true, id: 1, ordered: true }],
    ]);
    expect(pc.channels.every((c) => c.binaryType === 'arraybuffer')).toBe(true);
    expect(signalBodies()).toEqual([{ to: 'p1', from: '', kind: 'offer', sdp: 'offer-sdp', cand: '', mid: '' }]);
  });

  it('trickles candidates after the offer and ends with an empty candidate', async () => {
    const { peers, signalBodies } = await setup('p2', ['p1', 'p2']);
    const pc = only(peers.made);
    pc.candidate('candidate:1 1 udp 1 127.0.0.1 5000 typ relay');
    pc.candidate(null);
    pc.gatheringComplete();
    await flush();
    expect(signalBodies().slice(1)).toEqual([
      { to: 'p1', from: '', kind: 'candidate', sdp: '', cand: 'candidate:1 1 udp 1 127.0.0.1 5000 typ relay', mid: '0' },
      { to: 'p1', from: '', kind: 'candidate', sdp: '', cand: '', mid: '' },
    ]);
  });

  it('applies the answer and the host candidates in order, then opens', async () => {
    const { server, session, peers, events } = await setup('p2', ['p1', 'p2']);
    const pc = only(peers.made);
    server.send('signal', 0, { to: 'p2', from: 'p1', kind: 'answer', sdp: 'answer-sdp' });
    server.send('signal', 0, { to: 'p2', from: 'p1', kind: 'candidate', cand: 'candidate:2', mid: '0' });
    server.send('signal', 0, { to: 'p2', from: 'p1', kind: 'candidate' });
    server.send('signal', 0, { to: 'p2', from: 'p9', kind: 'candidate', cand: 'candidate:forged', mid: '0' });
    await flush();
    expect(pc.remoteDescription).toEqual({ type: 'answer', sdp: 'answer-sdp' });
    expect(pc.added).toEqual([{ candidate: 'candidate:2', sdpMid: '0' }, null]);
    pc.openChannels();
    expect(events).toEqual(['open p1']);
    expect(session.openPeers).toEqual(['p1']);
    pc.channel('events').receive('hi');
    expect(events).toContain('message p1 events hi');
  });

  it('paces the game channel: drops instead of queueing past the threshold', async () => {
    const { session, peers } = await setup('p2', ['p1', 'p2']);
    const pc = only(peers.made);
    pc.openChannels();
    const game = pc.channel('game');
    expect(session.send('p1', 'a')).toBe(true);
    game.bufferedAmount = 1001;
    expect(session.send('p1', 'b')).toBe(false);
    expect(session.send('p1', 'c', 'events')).toBe(true); // reliable events are never dropped
    expect(session.droppedPackets).toBe(1);
    expect(game.sent).toEqual(['a']);
  });

  it('fails fast on a TURN refusal (486 quota) and ignores 701', async () => {
    const { peers, errors, session } = await setup('p2', ['p1', 'p2']);
    const pc = only(peers.made);
    pc.iceError(701, 'STUN host lookup received error.');
    expect(errors).toEqual([]);
    pc.iceError(486, 'Allocation Quota Reached');
    expect(errors.map((e) => [e.code, e.peerId])).toEqual([['ice_candidate_error', 'p1']]);
    expect(errors[0]?.message).toMatch(/486.*quota/);
    expect(pc.closed).toBe(true);
    expect(session.openPeers).toEqual([]);
  });

  it('fails when gathering ends without a relay candidate', async () => {
    const { peers, errors } = await setup('p2', ['p1', 'p2']);
    const pc = only(peers.made);
    pc.candidate('candidate:1 1 udp 1 10.0.0.1 5000 typ host', 'host');
    pc.gatheringComplete();
    expect(errors.map((e) => e.code)).toEqual(['no_relay_candidates']);
  });

  it('fails a connection that does not open in time (the host may have failed silently)', async () => {
    const { peers, errors } = await setup('p2', ['p1', 'p2'], 20);
    const pc = only(peers.made);
    await new Promise((r) => setTimeout(r, 40));
    expect(errors.map((e) => e.code)).toEqual(['connection_failed']);
    expect(pc.closed).toBe(true);
  });

  it('closes everything when the room closes', async () => {
    const { server, peers, events, session } = await setup('p2', ['p1', 'p2']);
    const pc = only(peers.made);
    pc.openChannels();
    server.send('roomClosed', 0, { reason: 'host_left' });
    expect(pc.closed).toBe(true);
    expect(events).toEqual(['open p1', 'close p1', 'closed host_left']);
    expect(session.closed).toBe(true);
  });
});

describe('RoomSession as the host', () => {
  it('answers each client offer with its own connection and closes it when the client leaves', async () => {
    const { server, session, peers, events, signalBodies } = await setup('p1', ['p1']);
    expect(session.role).toBe('host');
    expect(peers.made).toHaveLength(0);

    server.send('playerJoined', 0, { player: { id: 'p2', name: 'Grace', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' } });
    server.send('signal', 0, { to: 'p1', from: 'p2', kind: 'offer', sdp: 'offer-sdp' });
    server.send('signal', 0, { to: 'p1', from: 'p2', kind: 'candidate', cand: 'candidate:9', mid: '0' });
    await flush();
    const pc = only(peers.made);
    expect(pc.remoteDescription).toEqual({ type: 'offer', sdp: 'offer-sdp' });
    expect(pc.localDescription).toEqual({ type: 'answer', sdp: 'answer-sdp' });
    expect(pc.added).toEqual([{ candidate: 'candidate:9', sdpMid: '0' }]);
    expect(signalBodies()).toEqual([{ to: 'p2', from: '', kind: 'answer', sdp: 'answer-sdp', cand: '', mid: '' }]);
    pc.openChannels();
    expect(session.players.map((p) => p.id)).toEqual(['p1', 'p2']);

    server.send('playerLeft', 0, { id: 'p2', reason: 'disconnected' });
    expect(pc.closed).toBe(true);
    expect(session.players.map((p) => p.id)).toEqual(['p1']);
    expect(events).toEqual(['joined p2', 'open p2', 'close p2', 'left p2 disconnected']);
  });

  it('ignores offers from strangers', async () => {
    const { server, peers } = await setup('p1', ['p1']);
    server.send('signal', 0, { to: 'p1', from: 'p7', kind: 'offer', sdp: 'x' });
    await flush();
    expect(peers.made).toHaveLength(0);
  });

  it('leave() closes peers and tells the server', async () => {
    const { server, session, events } = await setup('p1', ['p1']);
    await session.leave();
    expect(server.received.map((f) => f.t)).toContain('leaveRoom');
    expect(events).toEqual(['closed left']);
  });
});

describe('RoomSession.join with TURN credentials in the Welcome (issue 16)', () => {
  const welcomeIce = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'w', credential: 'wc' }], ttl: 600 };

  /**
   * A server that welcomes with ICE (or `body`) and holds the join's reply
   * until the test sends it; `localGate` holds the early connection's
   * setLocalDescription until it resolves.
   */
  async function joining(body: { ice?: typeof welcomeIce } = { ice: welcomeIce }, localGate?: Promise<void>) {
    const server = FakeServer.welcoming();
    const signals: Frame[] = [];
    let joinId = 0;
    server.onFrame = (f) => {
      if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's', ...body });
      if (f.t === 'joinRoom') joinId = f.id;
      if (f.t === 'signal') {
        signals.push(f);
        server.send('ok', f.id, {});
      }
    };
    const lobby = await LobbyClient.connect('ws://x/ws', 'p2', { transport: server.factory });
    const peers = fakePeerFactory();
    const create = (c: RTCConfiguration): RTCPeerConnection => {
      const pc = peers.create(c);
      if (localGate) only(peers.made).localGate = localGate;
      return pc;
    };
    const pending = RoomSession.join(lobby, 'ABC2345', '', { createPeerConnection: create, closeOnPageHide: false });
    await flush();
    return { server, peers, signals, pending, joinId: () => joinId };
  }

  it('offers and gathers before the reply, and sends it all to the host the moment the reply names it', async () => {
    const { server, peers, signals, pending, joinId } = await joining();
    // The reply has not come: the connection is made with the Welcome's credentials, its offer set, nothing sent.
    const pc = only(peers.made);
    expect(pc.config.iceServers).toEqual([{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'w', credential: 'wc' }]);
    expect(pc.localDescription?.type).toBe('offer');
    pc.candidate('candidate:1 1 udp 1 127.0.0.1 5000 typ relay');
    await flush();
    expect(signals).toHaveLength(0);

    server.send('roomJoined', joinId(), joined('p2', ['p1', 'p2']));
    const session = await pending;
    await flush();
    expect(peers.made).toHaveLength(1); // the same connection, not a second one
    expect(signals.map((f) => f.b)).toEqual([
      { to: 'p1', from: '', kind: 'offer', sdp: 'offer-sdp', cand: '', mid: '' },
      { to: 'p1', from: '', kind: 'candidate', sdp: '', cand: 'candidate:1 1 udp 1 127.0.0.1 5000 typ relay', mid: '0' },
    ]);
    session.close();
    expect(pc.closed).toBe(true);
  });

  it('resolves a join whose reply beat the offer only once the offer has gone to the host', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { server, signals, pending, joinId } = await joining({ ice: welcomeIce }, gate);
    let resolved = false;
    void pending.then(() => (resolved = true));
    server.send('roomJoined', joinId(), joined('p2', ['p1', 'p2']));
    await flush();
    expect(resolved).toBe(false); // the offer is not set yet: the page must not start drawing the room
    expect(signals).toHaveLength(0);
    release();
    const session = await pending;
    expect(signals.map((f) => (f.b as { kind: string }).kind)).toEqual(['offer']);
    session.close();
  });

  it('closes the early connection when the join fails', async () => {
    const { server, peers, pending, joinId } = await joining();
    server.send('error', joinId(), { code: 'room_not_found', msg: 'no such room' });
    await expect(pending).rejects.toMatchObject({ code: 'room_not_found' });
    expect(only(peers.made).closed).toBe(true);
  });

  it('waits for the reply as before when the Welcome has no credentials', async () => {
    const { server, peers, signals, pending, joinId } = await joining({});
    expect(peers.made).toHaveLength(0);
    server.send('roomJoined', joinId(), joined('p2', ['p1', 'p2']));
    const session = await pending;
    await flush();
    expect(only(peers.made).config.iceServers).toEqual([{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u', credential: 'c' }]);
    expect(signals.map((f) => (f.b as { kind: string }).kind)).toEqual(['offer']);
    session.close();
  });
});

describe('RoomSession as the host with a spare answerer (issue 16)', () => {
  async function hosting() {
    const server = FakeServer.welcoming();
    const signals: Frame[] = [];
    server.onFrame = (f) => {
      if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's' });
      if (f.t === 'signal') {
        signals.push(f);
        server.send('ok', f.id, {});
      }
    };
    const lobby = await LobbyClient.connect('ws://x/ws', 'p1', { transport: server.factory });
    const peers = fakePeerFactory();
    const session = new RoomSession(lobby, joined('p1', ['p1']), { createPeerConnection: peers.create, closeOnPageHide: false });
    await flush();
    return { server, peers, signals, session };
  }
  const offer = (from: string) => ({ to: 'p1', from, kind: 'offer' as const, sdp: `v=0\no=- ${from}1 2 IN IP4 127.0.0.1\n`, cand: '', mid: '' });

  it('gathers ahead of the next offer and answers it with that connection, then makes another', async () => {
    const { server, peers, signals, session } = await hosting();
    // Nobody has joined: one connection made ahead, with a candidate pool, its description not set.
    const spare = only(peers.made);
    expect(spare.config).toMatchObject({ iceTransportPolicy: 'relay', iceCandidatePoolSize: 1 });
    expect(spare.localDescription).toBeNull();

    server.send('playerJoined', 0, { player: { id: 'p2', name: 'P2', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' } });
    server.send('signal', 0, offer('p2'));
    await flush();
    await flush();
    expect(spare.remoteDescription?.type).toBe('offer');
    expect(spare.localDescription?.type).toBe('answer');
    expect(signals.map((f) => f.b)).toEqual([{ to: 'p2', from: '', kind: 'answer', sdp: 'answer-sdp', cand: '', mid: '' }]);
    // The next joiner's is ready already.
    expect(peers.made).toHaveLength(2);
    expect(peers.made[1]?.localDescription).toBeNull();
    session.close();
    expect(peers.made.every((pc) => pc.closed)).toBe(true);
  });

  it('makes a new spare with fresh credentials', async () => {
    const { server, peers, session } = await hosting();
    const fresh = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u2', credential: 'c2' }], ttl: 60 };
    server.send('iceRefresh', 0, { ice: fresh });
    await flush();
    expect(peers.made).toHaveLength(2);
    expect(peers.made[0]?.closed).toBe(true);
    expect(peers.made[1]?.config.iceServers).toEqual([{ urls: fresh.servers[0]!.urls, username: 'u2', credential: 'c2' }]);
    session.close();
  });
});
