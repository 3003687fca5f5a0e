import type { Unsubscribe } from '@hostrelay/sdk';

/** The two channels every peer has: unreliable "game" and reliable, ordered "events". */
export type NetChannel = 'game' | 'events';

export interface NetTransportEvents {
  message: [peerId: string, data: Uint8Array, channel: NetChannel];
  /** Both channels to this peer are open. */
  peerOpen: [peerId: string];
  peerClose: [peerId: string];
  /**
   * The room has a new host (the old one left a room made with `migrate`):
   * `hostId` now names it. Links to the old host are gone; a client's link
   * to the new host opens with peerOpen as usual.
   */
  hostChanged: [hostId: string, previousHostId: string];
}

/**
 * What the netcode needs from the network: a star of peers around the host,
 * two channels each. A RoomSession is one (see sessionTransport); the
 * conditioner wraps one; tests use a simulated one.
 */
export interface NetTransport {
  /** This tab's player id. */
  readonly localId: string;
  /** The host's player id (equal to localId on the host). It changes when the host migrates (hostChanged). */
  readonly hostId: string;
  /** Peers whose channels are open now: clients for the host, the host for a client. */
  peers(): readonly string[];
  /** False when the peer is not connected or the packet was dropped (pacing, conditioner). */
  send(peerId: string, data: Uint8Array<ArrayBuffer>, channel: NetChannel): boolean;
  on<K extends keyof NetTransportEvents>(event: K, listener: (...args: NetTransportEvents[K]) => void): Unsubscribe;
  /** Stops listening to whatever is underneath. Idempotent. */
  dispose(): void;
}

/** Time and timers, so the same code runs on the wall clock and on simulated time. */
export interface Scheduler {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Calls fn after delayMs; the returned function cancels it. */
  schedule(fn: () => void, delayMs: number): () => void;
}

/** performance.now and setTimeout. */
export const browserScheduler: Scheduler = {
  now: () => performance.now(),
  schedule: (fn, delayMs) => {
    const t = setTimeout(fn, Math.max(0, delayMs));
    return () => clearTimeout(t);
  },
};
