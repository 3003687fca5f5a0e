import { describe, expect, it } from 'vitest';
import { Emitter } from '@hostrelay/sdk';
import type { RoomSession, RoomSessionEvents } from '@hostrelay/sdk';
import { sessionTransport } from './session-transport.js';

/** Just enough of a RoomSession for the adapter. */
function fakeSession() {
  const events = new Emitter<RoomSessionEvents>();
  const sent: unknown[][] = [];
  const session = {
    you: 'p2',
    hostId: 'p1',
    openPeers: ['p1'],
    on: events.on.bind(events),
    send: (...args: unknown[]) => {
      sent.push(args);
      return true;
    },
  };
  return { session: session as unknown as RoomSession, events, sent };
}

describe('sessionTransport', () => {
  it('passes binary messages and peer events through, and ignores text', () => {
    const { session, events, sent } = fakeSession();
    const t = sessionTransport(session);
    const got: string[] = [];
    t.on('message', (id, data, ch) => got.push(`${id} ${ch} ${[...data].join(',')}`));
    t.on('peerClose', (id) => got.push(`close ${id}`));
    events.emit('message', 'p1', new Uint8Array([1, 2]).buffer, 'game');
    events.emit('message', 'p1', 'hello', 'events');
    events.emit('peerClose', 'p1');
    expect(got).toEqual(['p1 game 1,2', 'close p1']);
    expect([t.localId, t.hostId, t.peers()]).toEqual(['p2', 'p1', ['p1']]);
    expect(t.send('p1', new Uint8Array([3]), 'game')).toBe(true);
    expect(sent).toHaveLength(1);

    t.dispose();
    events.emit('message', 'p1', new Uint8Array([4]).buffer, 'game');
    expect(got).toHaveLength(2);
    expect(t.send('p1', new Uint8Array([3]), 'game')).toBe(false);
  });

  it('follows the session to a new host', () => {
    const { session, events } = fakeSession();
    const t = sessionTransport(session);
    const got: string[] = [];
    t.on('hostChanged', (host, prev) => got.push(`${prev}→${host} (now ${t.hostId})`));
    (session as unknown as { hostId: string }).hostId = 'p2';
    events.emit('hostChanged', { host: 'p2', previous: 'p1', role: 'host' });
    expect(got).toEqual(['p1→p2 (now p2)']);
  });
});
