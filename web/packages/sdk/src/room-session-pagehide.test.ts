import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RoomJoined } from '@hostrelay/protocol';
import { fakePeerFactory } from './fake-peer.test-util.js';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import { RoomSession, type RoomSessionOptions } from './room-session.js';

// A closed tab's peer connections hold TURN allocations until they time
// out; RoomSession closes them on pagehide. Node has no window, so the test
// stands one EventTarget in for it.

const ice = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u', credential: 'c' }], ttl: 60 };
const room = { code: 'ABC2345', name: 'r', maxPlayers: 4, public: false, hasPassword: false, host: 'p1', mode: '', started: false, migrate: false, spectators: 0, membersOnly: false };
const player = (id: string) => ({ id, name: id.toUpperCase(), ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' });
const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

let page: EventTarget;
let listeners: Set<unknown>;
beforeEach(() => {
  page = new EventTarget();
  listeners = new Set();
  vi.stubGlobal('addEventListener', (type: string, fn: EventListener) => {
    if (type === 'pagehide') listeners.add(fn);
    page.addEventListener(type, fn);
  });
  vi.stubGlobal('removeEventListener', (type: string, fn: EventListener) => {
    if (type === 'pagehide') listeners.delete(fn);
    page.removeEventListener(type, fn);
  });
});
afterEach(() => vi.unstubAllGlobals());

/** A host with a connection to each of `clients`, made from their offers. */
async function hostWith(clients: string[], options: RoomSessionOptions = {}) {
  const server = FakeServer.welcoming();
  const lobby = await LobbyClient.connect('ws://x/ws', 'p1', { transport: server.factory });
  const peers = fakePeerFactory();
  const joined: RoomJoined = { room, you: 'p1', players: ['p1', ...clients].map(player), ice };
  const session = new RoomSession(lobby, joined, { spareAnswerer: false, ...options, createPeerConnection: peers.create });
  const closed: string[] = [];
  session.on('closed', (why) => closed.push(why));
  for (const id of clients) server.send('signal', 0, { to: 'p1', from: id, kind: 'offer', sdp: 'offer-sdp' });
  await flush();
  for (const pc of peers.made) pc.openChannels();
  return { session, peers, closed };
}

describe('RoomSession on pagehide', () => {
  it('closes every peer connection and ends the session', async () => {
    const { session, peers, closed } = await hostWith(['p2', 'p3', 'p4']);
    expect(peers.made).toHaveLength(3);
    expect(session.openPeers).toEqual(['p2', 'p3', 'p4']);
    const closes = peers.made.map((pc) => vi.spyOn(pc, 'close'));

    page.dispatchEvent(new Event('pagehide'));

    for (const close of closes) expect(close).toHaveBeenCalledOnce();
    expect(peers.made.every((pc) => pc.closed)).toBe(true);
    expect(session.openPeers).toEqual([]);
    expect(closed).toEqual(['pagehide']);
  });

  it('stops listening once the session is closed', async () => {
    const { session, closed } = await hostWith(['p2']);
    expect(listeners.size).toBe(1);
    session.close('left');
    expect(listeners.size).toBe(0);
    page.dispatchEvent(new Event('pagehide'));
    expect(closed).toEqual(['left']);
  });

  it('leaves connections open when closeOnPageHide is false', async () => {
    const { session, peers } = await hostWith(['p2'], { closeOnPageHide: false });
    expect(listeners.size).toBe(0);
    page.dispatchEvent(new Event('pagehide'));
    expect(peers.made[0]!.closed).toBe(false);
    expect(session.openPeers).toEqual(['p2']);
  });
});
