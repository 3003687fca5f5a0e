import { describe, expect, it } from 'vitest';
import type { Frame, MessageMap } from '@hostrelay/protocol';
import { FakeCluster, type FakeNode } from './fake-cluster.test-util.js';
import { LobbyClient, type NodeMove } from './lobby-client.js';
import { RoomDirectory } from './room-directory.js';
import { RoomSession } from './room-session.js';
import { MAX_NODE_HOPS } from './node-route.js';
import type { ReconnectPolicy } from './reconnect.js';

// A cluster's node that does not hold a room answers room_elsewhere with the
// node that does; the client moves there and asks again, so a caller sees
// only the answer: the old connection closed with 1000, hello again with the
// same name and device, the same request once more, the client's URL, node
// and region the new node's, and a resume that goes to it.

const now: ReconnectPolicy = { nextRetryDelayMs: (n) => (n <= 5 ? 0 : null) };
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
const DEVICE = 'device-0123456789abcdef';

const roomInfo = { code: 'ABC2345', name: 'Lunch', maxPlayers: 4, public: true, hasPassword: false, host: 'p1', mode: '', started: false, migrate: false, spectators: 0, membersOnly: false };
const summary = { code: 'ABC2345', name: 'Lunch', host: 'Ada', players: 1, maxPlayers: 4, mode: '', hasPassword: false, started: false, region: 'eu' };
const joined = { room: roomInfo, you: 'p2', players: [], ice: { servers: [], ttl: 60 } };

/** What the room's node answers: the reply each placing request expects. */
function owner(f: Frame, node: FakeNode): void {
  const s = node.server;
  if (f.t === 'createRoom' || f.t === 'joinRoom' || f.t === 'quickPlay') s.send('roomJoined', f.id, { ...joined, you: f.t === 'createRoom' ? 'p1' : 'p2' });
  else if (f.t === 'spectate') s.send('spectating', f.id, { room: summary, delayMs: 2000, maxData: 1000 });
  else if (f.t === 'watchRooms') s.send('roomList', f.id, { rooms: [summary] });
  else s.send('ok', f.id, {});
}

/** A node that sends every request to `to`. */
const sendsTo = (to: () => FakeNode, region = 'eu') => (f: Frame, node: FakeNode): void =>
  node.server.send('error', f.id, { code: 'room_elsewhere', msg: `room is on node ${to().id}`, url: to().url, region });

function twoNodes(): { cluster: FakeCluster; a: FakeNode; b: FakeNode } {
  const cluster = new FakeCluster();
  const b = cluster.node('b', 'eu', owner);
  const a = cluster.node('a', 'us', sendsTo(() => b));
  return { cluster, a, b };
}

const connect = (cluster: FakeCluster, url: string, opts: { resume?: boolean } = {}): Promise<LobbyClient> =>
  LobbyClient.connect(url, 'Ada', { transport: cluster.factory, device: DEVICE, pings: true, resumePolicy: now, ...opts });

const requestsOf = (node: FakeNode): Frame[] => node.server.received.filter((f) => f.t !== 'hello');

describe('LobbyClient follows room_elsewhere', () => {
  const placing: [string, (c: LobbyClient) => Promise<unknown>, keyof MessageMap, unknown][] = [
    ['createRoom', (c) => c.createRoom({ name: 'Lunch', maxPlayers: 4, public: true, region: 'eu' }), 'createRoom',
      { name: 'Lunch', maxPlayers: 4, public: true, password: '', mode: '', migrate: false, region: 'eu', membersOnly: false }],
    ['joinRoom', (c) => c.joinRoom('ABC2345', 'pw'), 'joinRoom', { code: 'ABC2345', password: 'pw' }],
    ['spectate', (c) => c.spectate('ABC2345'), 'spectate', { code: 'ABC2345', password: '' }],
    ['quickPlay', (c) => c.quickPlay('arena'), 'quickPlay', { mode: 'arena', maxPlayers: 0, migrate: false }],
  ];
  for (const [name, run, type, body] of placing) {
    it(`${name}: moves to the owner, says hello again, repeats the request and resolves`, async () => {
      const { cluster, a, b } = twoNodes();
      const client = await connect(cluster, a.url);
      const moves: NodeMove[] = [];
      client.on('moved', (m) => moves.push(m));
      expect([client.url, client.node, client.region, client.session]).toEqual([a.url, 'a', 'us', 's_a']);

      await expect(run(client)).resolves.toBeTruthy();

      // The same request, byte for byte, once on each node.
      expect(requestsOf(a)).toEqual([{ t: type, id: 2, b: body }]);
      expect(requestsOf(b)).toEqual([{ t: type, id: 4, b: body }]);
      // Hello again with the same name, device and options; no resume token: a new session.
      expect(b.hellos.map((h) => h.b)).toEqual([{ v: 1, name: 'Ada', device: DEVICE, pings: true, resume: '', received: 0, token: '' }]);
      // The old node saw a clean close, so it holds no seat for us.
      expect(a.server.closes).toEqual([{ code: 1000, reason: 'moved to another node' }]);
      expect(b.server.closed).toBe(false);
      expect(moves).toEqual([{ from: a.url, to: b.url, node: 'b', region: 'eu' }]);
      expect([client.url, client.node, client.region, client.session, client.connected]).toEqual([b.url, 'b', 'eu', 's_b', true]);
    });
  }

  it('resumes on the node it moved to after a dropped connection', async () => {
    const { cluster, a, b } = twoNodes();
    const client = await connect(cluster, a.url, { resume: true });
    const resumed: string[] = [];
    client.on('resumed', () => resumed.push(client.url));
    await client.joinRoom('ABC2345');
    b.server.send('chatMessage', 0, { from: 'p1', name: 'Ada', text: 'hi', at: 1 });

    b.server.drop(1006);
    await tick();

    expect(resumed).toEqual([b.url]);
    expect(cluster.dials).toEqual([a.url, b.url, b.url]);
    // b's token, and b's frames only: its welcome, roomJoined and the chat line.
    expect(b.hellos[1]?.b).toMatchObject({ resume: 'b-r1', received: 3 });
    expect(a.hellos).toHaveLength(1);
    expect(client.url).toBe(b.url);
  });

  it('goes through at most MAX_NODE_HOPS nodes, then fails with redirect_loop', async () => {
    const cluster = new FakeCluster();
    // a → b → c → d: each node names the next one.
    const nodes: FakeNode[] = ['a', 'b', 'c', 'd'].map((id, i) => cluster.node(id, 'eu', sendsTo(() => nodes[Math.min(i + 1, 3)]!)));
    const client = await connect(cluster, nodes[0]!.url);
    const err = await client.joinRoom('ABC2345').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'redirect_loop' });
    expect(String((err as Error).message)).toContain('ws://a.test/ws → ws://b.test/ws → ws://c.test/ws → ws://d.test/ws');
    expect(cluster.dials).toEqual(nodes.slice(0, MAX_NODE_HOPS + 1).map((n) => n.url));
    // Still connected where the last move took it, and usable.
    expect([client.url, client.connected]).toEqual([nodes[MAX_NODE_HOPS]!.url, true]);
  });

  it('fails with redirect_loop when two nodes send it back and forth', async () => {
    const cluster = new FakeCluster();
    const a: FakeNode = cluster.node('a', 'us', sendsTo(() => b));
    const b: FakeNode = cluster.node('b', 'eu', sendsTo(() => a));
    const client = await connect(cluster, a.url);
    await expect(client.createRoom({ name: 'r', maxPlayers: 2, public: false })).rejects.toMatchObject({ code: 'redirect_loop' });
    expect(cluster.dials).toEqual([a.url, b.url]);
  });

  it('stays where it is when the other node cannot be reached', async () => {
    const cluster = new FakeCluster();
    const a = cluster.node('a', 'us', (f, n) =>
      n.server.send('error', f.id, { code: 'room_elsewhere', msg: 'on c', url: 'ws://gone.test/ws' }),
    );
    const client = await connect(cluster, a.url);
    await expect(client.joinRoom('ABC2345')).rejects.toMatchObject({ code: 'unreachable' });
    expect([client.url, client.connected, a.server.closed]).toEqual([a.url, true, false]);
    a.answer = owner;
    await expect(client.setReady(true)).resolves.toBeUndefined();
  });

  it('refuses to follow a room_elsewhere without a WebSocket URL', async () => {
    for (const url of ['', 'http://b.test/', 'not a url']) {
      const cluster = new FakeCluster();
      const a = cluster.node('a', 'us', (f, n) => n.server.send('error', f.id, { code: 'room_elsewhere', msg: 'elsewhere', url }));
      const client = await connect(cluster, a.url);
      await expect(client.joinRoom('ABC2345')).rejects.toMatchObject({ code: 'protocol' });
      expect(cluster.dials).toEqual([a.url]);
    }
  });

  it('lets a request in flight finish on the old node and holds new ones for the new node', async () => {
    const { cluster, a, b } = twoNodes();
    let readyId = 0;
    a.answer = (f, n) => {
      if (f.t === 'setReady') readyId = f.id; // answered later
      else sendsTo(() => b)(f, n);
    };
    const client = await connect(cluster, a.url);
    const ready = client.setReady(true);
    const join = client.joinRoom('ABC2345');
    await tick();
    expect(cluster.dials).toEqual([a.url]); // waiting for setReady's reply
    const chat = client.sendChat('hello'); // sent during the move: held
    expect(client.connected).toBe(true);
    a.server.send('ok', readyId, {});
    await expect(ready).resolves.toBeUndefined();
    await expect(join).resolves.toMatchObject({ you: 'p2' });
    await expect(chat).resolves.toBeUndefined();
    expect(requestsOf(a).map((f) => f.t)).toEqual(['setReady', 'joinRoom']);
    expect(requestsOf(b).map((f) => f.t)).toEqual(['joinRoom', 'chat']);
  });

  it('moves on when the old node drops while a reply is still owed', async () => {
    const { cluster, a, b } = twoNodes();
    a.answer = (f, n) => {
      if (f.t !== 'setReady') sendsTo(() => b)(f, n); // setReady is never answered
    };
    const client = await connect(cluster, a.url, { resume: true });
    const ready = client.setReady(true);
    const join = client.joinRoom('ABC2345');
    await tick();
    expect(cluster.dials).toEqual([a.url]); // the move waits for setReady's reply
    a.server.drop(1006);
    await expect(ready).rejects.toMatchObject({ code: 'closed' });
    await expect(join).resolves.toMatchObject({ you: 'p2' });
    // No resume on the old node: the move took over.
    expect(a.hellos).toHaveLength(1);
    expect([client.url, client.connected]).toEqual([b.url, true]);
  });

  it('keeps a RoomDirectory watching across a move', async () => {
    const { cluster, a, b } = twoNodes();
    const other = { ...summary, code: 'XYZ2345', region: 'us' };
    a.answer = (f, n) => {
      if (f.t === 'watchRooms') n.server.send('roomList', f.id, { rooms: [other] });
      else sendsTo(() => b)(f, n);
    };
    const client = await connect(cluster, a.url);
    const dir = await RoomDirectory.watch(client);
    const changes: string[][] = [];
    dir.on('change', (rooms) => changes.push(rooms.map((r) => r.code)));
    await client.spectate('ABC2345');
    await tick();
    expect(requestsOf(b).map((f) => f.t)).toEqual(['spectate', 'watchRooms']);
    expect(changes).toEqual([['ABC2345']]);
    expect(dir.rooms[0]?.region).toBe('eu');
  });
});

describe('resuming after a move', () => {
  it('asks the first node when the one it moved to is gone, and hears room_lost', async () => {
    const { cluster, a, b } = twoNodes();
    const client = await connect(cluster, a.url, { resume: true });
    const session = await RoomSession.create(client, { name: 'Lunch', maxPlayers: 4, public: true, region: 'eu' });
    const ended: string[] = [];
    session.on('closed', (reason) => ended.push(reason));
    const closes: unknown[] = [];
    client.on('close', (info) => closes.push(info));
    const resumeHellos: Frame[] = [];
    a.server.onFrame = ((inner) => (f: Frame) => {
      if (f.t !== 'hello' || f.b?.resume === '') return inner(f);
      resumeHellos.push(f);
      a.server.send('error', f.id, { code: 'room_lost', msg: 'the server holding your seat stopped' });
    })(a.server.onFrame);

    cluster.stop(b);
    await tick();

    expect(cluster.dials.slice(-2)).toEqual([b.url, a.url]);
    expect(resumeHellos.map((h) => h.b)).toEqual([expect.objectContaining({ resume: 'b-r1' })]);
    expect(closes).toEqual([{ code: 1006, reason: 'the server holding your seat stopped', error: expect.objectContaining({ code: 'room_lost' }) }]);
    expect(ended).toEqual(['room_lost']);
  });

  it('keeps trying the node it moved to while the first node says it is alive', async () => {
    const { cluster, a, b } = twoNodes();
    const client = await connect(cluster, a.url, { resume: true });
    await client.joinRoom('ABC2345');
    let asked = 0;
    a.server.onFrame = ((inner) => (f: Frame) => {
      if (f.t !== 'hello' || f.b?.resume === '') return inner(f);
      // The seat's node is only slow: it comes back after the first node was asked.
      asked++;
      cluster.start(b);
      a.server.send('error', f.id, { code: 'room_elsewhere', msg: 'resume there', url: b.url, region: 'eu' });
    })(a.server.onFrame);
    const resumed: string[] = [];
    client.on('resumed', () => resumed.push(client.url));

    cluster.stop(b);
    await tick();
    await tick();

    expect(asked).toBe(1);
    expect(resumed).toEqual([b.url]);
    expect(b.hellos.at(-1)?.b).toMatchObject({ resume: 'b-r1' });
    expect(client.connected).toBe(true);
  });
});

describe('room_lost', () => {
  it('rejects a join with a typed room_lost error', async () => {
    const cluster = new FakeCluster();
    const a = cluster.node('a', 'us', (f, n) => n.server.send('error', f.id, { code: 'room_lost', msg: 'room ABC2345 was lost with its node' }));
    const client = await connect(cluster, a.url);
    await expect(client.joinRoom('ABC2345')).rejects.toMatchObject({ code: 'room_lost', message: 'room ABC2345 was lost with its node' });
  });
});
