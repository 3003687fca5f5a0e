import { Emitter, type Unsubscribe } from '@hostrelay/sdk';
import type { Random } from './rng.js';
import { browserScheduler, type NetChannel, type NetTransport, type NetTransportEvents, type Scheduler } from './transport.js';

/**
 * A bad network on demand, in the style of netem. Every figure applies to
 * each direction of this tab's traffic: a client with latencyMs 50 sees
 * 100 ms more round trip, and loss 0.1 loses 10 % of packets each way.
 */
export interface Conditions {
  /** Added one-way delay, ms. */
  latencyMs: number;
  /** Each packet's delay varies by up to ± this, ms (uniform). Packets stay in order unless reordered. */
  jitterMs: number;
  /** Chance a game packet is dropped, 0–1. */
  loss: number;
  /** Chance a game packet arrives twice, 0–1. */
  duplicate: number;
  /** Chance a game packet is held back so later ones overtake it, 0–1. */
  reorder: number;
}

export const NO_CONDITIONS: Readonly<Conditions> = { latencyMs: 0, jitterMs: 0, loss: 0, duplicate: 0, reorder: 0 };

export interface ConditionerOptions {
  conditions?: Partial<Conditions>;
  /** Defaults to Math.random; pass seededRandom(seed) for a replayable run. */
  random?: Random;
  scheduler?: Scheduler;
}

export interface ConditionerStats {
  dropped: number;
  duplicated: number;
  reordered: number;
}

type Direction = 'out' | 'in';

function clampConditions(c: Partial<Conditions>, base: Conditions): Conditions {
  const p = (v: number | undefined, d: number): number => Math.min(1, Math.max(0, v ?? d));
  const ms = (v: number | undefined, d: number): number => Math.max(0, v ?? d);
  return {
    latencyMs: ms(c.latencyMs, base.latencyMs),
    jitterMs: ms(c.jitterMs, base.jitterMs),
    loss: p(c.loss, base.loss),
    duplicate: p(c.duplicate, base.duplicate),
    reorder: p(c.reorder, base.reorder),
  };
}

/**
 * Wraps a transport and delays, drops, duplicates and reorders what passes
 * through it, both ways. Only the unreliable "game" channel loses,
 * duplicates or reorders: the reliable channel would retransmit, so it only
 * sees the delay, in order.
 *
 * @example
 * const net = new ConditionedTransport(sessionTransport(session), {
 *   conditions: { latencyMs: 100, jitterMs: 20, loss: 0.1 },
 * });
 * net.setConditions({ loss: 0 }); // live, from a debug panel
 */
export class ConditionedTransport implements NetTransport {
  readonly localId: string;
  private current: Conditions;
  private readonly random: Random;
  private readonly scheduler: Scheduler;
  private readonly events = new Emitter<NetTransportEvents>();
  private readonly offs: Unsubscribe[];
  // FIFO horizon per direction, peer and channel: a packet not chosen for
  // reordering is never delivered before one sent earlier.
  private readonly horizon = new Map<string, number>();
  private readonly pending = new Map<string, Set<() => void>>();
  private readonly counts: ConditionerStats = { dropped: 0, duplicated: 0, reordered: 0 };
  private disposed = false;

  constructor(
    private readonly inner: NetTransport,
    options: ConditionerOptions = {},
  ) {
    this.localId = inner.localId;
    this.current = clampConditions(options.conditions ?? {}, NO_CONDITIONS);
    this.random = options.random ?? Math.random;
    this.scheduler = options.scheduler ?? browserScheduler;
    this.offs = [
      inner.on('message', (peerId, data, channel) =>
        this.pass('in', peerId, channel, () => this.events.emit('message', peerId, data, channel)),
      ),
      inner.on('peerOpen', (peerId) => this.events.emit('peerOpen', peerId)),
      inner.on('peerClose', (peerId) => {
        this.cancel(peerId);
        this.events.emit('peerClose', peerId);
      }),
      inner.on('hostChanged', (hostId, previous) => this.events.emit('hostChanged', hostId, previous)),
    ];
  }

  get hostId(): string {
    return this.inner.hostId;
  }

  get conditions(): Readonly<Conditions> {
    return this.current;
  }

  /** Changes some or all of the conditions; packets already in flight keep their fate. */
  setConditions(c: Partial<Conditions>): void {
    this.current = clampConditions(c, this.current);
  }

  get stats(): Readonly<ConditionerStats> {
    return { ...this.counts };
  }

  peers(): readonly string[] {
    return this.inner.peers();
  }

  send(peerId: string, data: Uint8Array<ArrayBuffer>, channel: NetChannel): boolean {
    if (this.disposed) return false;
    this.pass('out', peerId, channel, () => this.inner.send(peerId, data, channel));
    // Like a real network, a packet lost on the way is still "sent".
    return this.inner.peers().includes(peerId);
  }

  on<K extends keyof NetTransportEvents>(event: K, listener: (...args: NetTransportEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const off of this.offs) off();
    for (const peerId of [...this.pending.keys()]) this.cancel(peerId);
    this.events.clear();
    this.inner.dispose();
  }

  private pass(dir: Direction, peerId: string, channel: NetChannel, deliver: () => void): void {
    const c = this.current;
    const lossy = channel === 'game';
    if (lossy && c.loss > 0 && this.random() < c.loss) {
      this.counts.dropped++;
      return;
    }
    const copies = lossy && c.duplicate > 0 && this.random() < c.duplicate ? 2 : 1;
    if (copies === 2) this.counts.duplicated++;
    for (let i = 0; i < copies; i++) {
      const key = this.key(dir, peerId, channel);
      const idle = c.latencyMs === 0 && c.jitterMs === 0 && !(lossy && c.reorder > 0);
      // With nothing to add and nothing still queued on this path, deliver at once.
      if (idle && (this.horizon.get(key) ?? 0) <= this.scheduler.now()) deliver();
      else this.delay(key, peerId, channel, deliver);
    }
  }

  private delay(key: string, peerId: string, channel: NetChannel, deliver: () => void): void {
    const c = this.current;
    const now = this.scheduler.now();
    let at = now + c.latencyMs + (c.jitterMs > 0 ? (this.random() * 2 - 1) * c.jitterMs : 0);
    at = Math.max(now, at);
    if (channel === 'game' && c.reorder > 0 && this.random() < c.reorder) {
      // Held back past the FIFO horizon, so packets sent after it overtake it.
      this.counts.reordered++;
      at += 1 + this.random() * Math.max(c.jitterMs, 20);
    } else {
      at = Math.max(at, this.horizon.get(key) ?? 0);
      this.horizon.set(key, at);
    }
    let set = this.pending.get(peerId);
    if (!set) {
      set = new Set();
      this.pending.set(peerId, set);
    }
    const entry = set;
    const cancel = this.scheduler.schedule(() => {
      entry.delete(cancel);
      deliver();
    }, at - now);
    entry.add(cancel);
  }

  private cancel(peerId: string): void {
    const set = this.pending.get(peerId);
    if (!set) return;
    for (const cancel of set) cancel();
    this.pending.delete(peerId);
    for (const k of [...this.horizon.keys()]) if (k.endsWith(`\u0000${peerId}`)) this.horizon.delete(k);
  }

  private key(dir: Direction, peerId: string, channel: NetChannel): string {
    return `${dir}\u0000${channel}\u0000${peerId}`;
  }
}
