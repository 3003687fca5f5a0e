import { Emitter } from '@hostrelay/sdk';
import type { RoomSession } from '@hostrelay/sdk';
import type { NetTransport, NetTransportEvents } from './transport.js';

/**
 * A RoomSession as a NetTransport: its "game" and "events" data channels,
 * binary only (text frames are not ours and are ignored).
 *
 * @example
 * const transport = sessionTransport(session);
 * const client = new NetClient({ transport, game, ... });
 */
export function sessionTransport(session: RoomSession): NetTransport {
  const events = new Emitter<NetTransportEvents>();
  const offs = [
    session.on('message', (peerId, data, channel) => {
      if (typeof data !== 'string') events.emit('message', peerId, new Uint8Array(data), channel);
    }),
    session.on('peerOpen', (peerId) => events.emit('peerOpen', peerId)),
    session.on('peerClose', (peerId) => events.emit('peerClose', peerId)),
    session.on('hostChanged', ({ host, previous }) => events.emit('hostChanged', host, previous)),
  ];
  let disposed = false;
  return {
    localId: session.you,
    get hostId() {
      return session.hostId;
    },
    peers: () => session.openPeers,
    send: (peerId, data, channel) => !disposed && session.send(peerId, data, channel),
    on: (event, listener) => events.on(event, listener),
    dispose: () => {
      if (disposed) return;
      disposed = true;
      for (const off of offs) off();
      events.clear();
    },
  };
}
