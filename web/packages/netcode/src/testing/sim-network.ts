import { Emitter } from '@hostrelay/sdk';
import { ConditionedTransport, type Conditions } from '../transport/conditioner.js';
import { seededRandom } from '../transport/rng.js';
import type { NetChannel, NetTransport, NetTransportEvents } from '../transport/transport.js';
import type { SimClock } from './sim-clock.js';

/** Bytes and packets that crossed the simulated wire, per endpoint. */
export interface WireCount {
  bytesOut: number;
  bytesIn: number;
  packetsOut: number;
  packetsIn: number;
}

class SimEndpoint implements NetTransport {
  readonly events = new Emitter<NetTransportEvents>();
  readonly open = new Set<string>();
  readonly wire: WireCount = { bytesOut: 0, bytesIn: 0, packetsOut: 0, packetsIn: 0 };
  disposed = false;

  constructor(
    private readonly net: SimNetwork,
    readonly localId: string,
    public hostId: string,
  ) {}

  peers(): readonly string[] {
    return [...this.open];
  }

  send(peerId: string, data: Uint8Array<ArrayBuffer>, channel: NetChannel): boolean {
    if (this.disposed || !this.open.has(peerId)) return false;
    this.wire.bytesOut += data.length;
    this.wire.packetsOut++;
    this.net.deliver(this.localId, peerId, data.slice(), channel);
    return true;
  }

  on<K extends keyof NetTransportEvents>(event: K, listener: (...args: NetTransportEvents[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  dispose(): void {
    this.disposed = true;
  }
}

/**
 * A star network on simulated time: a host and clients joined by perfect
 * links (delivered on the next timer turn, never synchronously, as a real
 * data channel would). Bad conditions come from the same ConditionedTransport
 * the browser uses, wrapped around each client with a seeded PRNG, so a
 * client's figures apply to both directions of its link.
 *
 * @example
 * const clock = new SimClock();
 * const net = new SimNetwork(clock, 'host');
 * const hostTransport = net.hostTransport();
 * const c1 = net.addClient('c1', { latencyMs: 50, jitterMs: 20, loss: 0.1 }, 42);
 */
export class SimNetwork {
  private readonly endpoints = new Map<string, SimEndpoint>();
  private host: string;

  constructor(
    private readonly clock: SimClock,
    hostId: string,
  ) {
    this.host = hostId;
    this.endpoints.set(hostId, new SimEndpoint(this, hostId, hostId));
  }

  /** The current host (it changes with migrate). */
  get hostId(): string {
    return this.host;
  }

  hostTransport(): NetTransport {
    return this.endpoints.get(this.hostId)!;
  }

  /** Adds a client, opens its link to the host on the next turn, and returns its (conditioned) transport. */
  addClient(id: string, conditions: Partial<Conditions> = {}, seed = 1): ConditionedTransport {
    const ep = new SimEndpoint(this, id, this.hostId);
    this.endpoints.set(id, ep);
    this.clock.schedule(() => {
      const host = this.endpoints.get(this.hostId)!;
      ep.open.add(this.hostId);
      host.open.add(id);
      host.events.emit('peerOpen', id);
      ep.events.emit('peerOpen', this.hostId);
    }, 0);
    return new ConditionedTransport(ep, { conditions, random: seededRandom(seed), scheduler: this.clock });
  }

  /** Closes a client's link, as if its tab went away. */
  removeClient(id: string): void {
    const ep = this.endpoints.get(id);
    const host = this.endpoints.get(this.hostId);
    if (!ep || !host) return;
    this.endpoints.delete(id);
    host.open.delete(id);
    ep.open.delete(this.hostId);
    host.events.emit('peerClose', id);
    ep.events.emit('peerClose', this.hostId);
  }

  /**
   * The host's tab goes away and the client `newHost` takes over, in the
   * order the lobby tells it: every link to the old host closes, everyone
   * hears hostChanged, then each remaining client's link to the new host
   * opens on the next turn (its offer and the answer), or `linkMs` later
   * (the offer, the answer and the handshakes on a slow network).
   */
  migrate(newHost: string, linkMs = 0): void {
    const old = this.host;
    if (newHost === old || !this.endpoints.has(newHost)) return;
    this.endpoints.delete(old);
    for (const ep of this.endpoints.values()) {
      if (ep.open.delete(old)) ep.events.emit('peerClose', old);
    }
    this.host = newHost;
    for (const ep of this.endpoints.values()) {
      ep.hostId = newHost;
      ep.events.emit('hostChanged', newHost, old);
    }
    this.clock.schedule(() => {
      const next = this.endpoints.get(newHost);
      if (!next) return;
      for (const ep of this.endpoints.values()) {
        if (ep === next) continue;
        ep.open.add(newHost);
        next.open.add(ep.localId);
        next.events.emit('peerOpen', ep.localId);
        ep.events.emit('peerOpen', newHost);
      }
    }, linkMs);
  }

  /** What crossed the wire at this endpoint (after the conditioner's losses, before its delays on the far side). */
  wire(id: string): WireCount {
    return { ...(this.endpoints.get(id)?.wire ?? { bytesOut: 0, bytesIn: 0, packetsOut: 0, packetsIn: 0 }) };
  }

  /** @internal */
  deliver(from: string, to: string, data: Uint8Array, channel: NetChannel): void {
    this.clock.schedule(() => {
      const ep = this.endpoints.get(to);
      if (!ep || !ep.open.has(from)) return;
      ep.wire.bytesIn += data.length;
      ep.wire.packetsIn++;
      ep.events.emit('message', from, data, channel);
    }, 0);
  }
}
