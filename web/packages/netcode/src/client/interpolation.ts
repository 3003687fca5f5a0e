import { lerpEntity, type EntityMap, type ReadonlyEntityMap, type Schema } from '../wire/schema.js';

/** A snapshot as the client holds it. */
interface Held<F extends string> {
  tick: number;
  entities: ReadonlyEntityMap<F>;
}

export interface Sample<F extends string> {
  entities: EntityMap<F>;
  /** No snapshot at or after the render tick: the frame was extrapolated (or frozen past the cap). */
  dry: boolean;
}

/**
 * Received snapshots in tick order, sampled at a render tick in the past:
 * remote entities are drawn between two states the host really had
 * (Valve's entity interpolation). When the buffer runs dry, linear fields
 * are extrapolated from the last two snapshots, but only up to a cap: a
 * guess held longer looks worse than a pause.
 */
export class SnapshotBuffer<F extends string> {
  private readonly held: Held<F>[] = [];

  constructor(
    private readonly schema: Schema<F>,
    private readonly capacity = 32,
  ) {}

  get newestTick(): number {
    return this.held.length > 0 ? this.held[this.held.length - 1]!.tick : 0;
  }

  /** Forgets every snapshot (a new host's ticks do not follow the old one's). */
  clear(): void {
    this.held.length = 0;
  }

  /** Adds a snapshot; late (reordered) ones still fill their place if it is not already past. */
  insert(tick: number, entities: ReadonlyEntityMap<F>): void {
    let i = this.held.length;
    while (i > 0 && this.held[i - 1]!.tick > tick) i--;
    if (i > 0 && this.held[i - 1]!.tick === tick) return;
    this.held.splice(i, 0, { tick, entities });
    if (this.held.length > this.capacity) this.held.shift();
  }

  sample(renderTick: number, maxExtrapolationTicks: number): Sample<F> {
    const h = this.held;
    if (h.length === 0) return { entities: new Map(), dry: true };
    let b = 0;
    while (b < h.length && h[b]!.tick <= renderTick) b++;
    // Everything older than the snapshot before the render tick is no longer needed (keep one more for extrapolation).
    if (b >= 3) {
      h.splice(0, b - 2);
      b = 2;
    }
    if (b === 0) return { entities: new Map(h[0]!.entities), dry: false };
    const a = h[b - 1]!;
    const next = h[b];
    if (next) {
      const t = (renderTick - a.tick) / (next.tick - a.tick);
      return { entities: this.blend(a.entities, next.entities, t), dry: false };
    }
    if (a.tick === renderTick) return { entities: new Map(a.entities), dry: false };
    const prev = h[b - 2];
    if (!prev || maxExtrapolationTicks <= 0) return { entities: new Map(a.entities), dry: true };
    const ahead = Math.min(renderTick - a.tick, maxExtrapolationTicks) / (a.tick - prev.tick);
    return { entities: this.extrapolate(prev.entities, a.entities, ahead), dry: true };
  }

  private blend(a: ReadonlyEntityMap<F>, b: ReadonlyEntityMap<F>, t: number): EntityMap<F> {
    const out: EntityMap<F> = new Map();
    for (const [id, eb] of b) {
      const ea = a.get(id);
      // An entity new in b appears when b is reached.
      if (ea) out.set(id, lerpEntity(this.schema, ea, eb, t));
    }
    // An entity gone in b stays until b is reached.
    for (const [id, ea] of a) if (!b.has(id)) out.set(id, ea);
    return out;
  }

  /** Continues each linear field's last motion by k snapshot intervals past b. */
  private extrapolate(a: ReadonlyEntityMap<F>, b: ReadonlyEntityMap<F>, k: number): EntityMap<F> {
    const out: EntityMap<F> = new Map();
    const s = this.schema;
    for (const [id, eb] of b) {
      const ea = a.get(id);
      const e = s.copy(eb);
      if (ea) {
        for (let i = 0; i < s.size; i++) {
          const f = s.fields[i]!;
          const d = eb[f] - ea[f];
          if (s.interpolation(i) === 'linear' && Math.abs(d) <= s.snapOver(i)) e[f] = eb[f] + d * k;
        }
      }
      out.set(id, e);
    }
    return out;
  }
}

export interface PlayoutOptions {
  tickRate: number;
  snapshotRate: number;
  /** The delay never goes below this, ms (default: 100, or two snapshot intervals if that is more). */
  minDelayMs?: number;
  /** Nor above this, ms (default 400). */
  maxDelayMs?: number;
  /** Share of frame time the buffer may run dry that the delay is sized for (default 0.2 %). */
  dryBudget?: number;
}

const WINDOW_ARRIVALS = 200;
const OFFSET_WINDOW_MS = 4000;

/**
 * When remote entities are drawn: a render tick that follows the host's
 * clock a little behind, far enough that a snapshot at or past it has
 * (almost always) arrived. The delay adapts: from recent arrivals it keeps
 * how far behind the newest data was just before each snapshot came, and
 * picks the smallest delay that would have left the buffer dry for no more
 * than `dryBudget` of the time. Jitter and bursts of loss both raise it;
 * a quiet network lets it fall back to the minimum. The render tick moves
 * smoothly towards its target (at most 10 % faster than real time, or down
 * to half speed when it is ahead), and jumps only when it is far off.
 */
export class PlayoutClock {
  private readonly r: number; // ticks per ms
  private readonly minDelay: number; // ticks
  private readonly maxDelay: number;
  private readonly budget: number;
  private readonly offsets: { at: number; offset: number }[] = [];
  private readonly gaps: { gap: number; span: number }[] = [];
  private offset = -Infinity;
  private newest = -1;
  private lastArrival = 0;
  private delay: number;
  private render: number | null = null;
  private lastNow = 0;

  constructor(o: PlayoutOptions) {
    this.r = o.tickRate / 1000;
    const minMs = o.minDelayMs ?? Math.max(100, 2000 / o.snapshotRate);
    this.minDelay = minMs * this.r;
    this.maxDelay = Math.max(minMs, o.maxDelayMs ?? 400) * this.r;
    this.budget = o.dryBudget ?? 0.002;
    this.delay = this.minDelay;
  }

  /** The current delay behind the host's clock, ms. */
  get delayMs(): number {
    return this.delay / this.r;
  }

  /** Feeds a snapshot's arrival. Only the newest so far tells us about timing. */
  onSnapshot(tick: number, now: number): void {
    if (tick <= this.newest) return;
    const sample = tick - now * this.r;
    this.offsets.push({ at: now, offset: sample });
    while (this.offsets.length > 0 && this.offsets[0]!.at < now - OFFSET_WINDOW_MS) this.offsets.shift();
    // The least delayed packet of the window bounds the host's clock from below.
    this.offset = Math.max(...this.offsets.map((o) => o.offset));
    if (this.newest >= 0) {
      this.gaps.push({ gap: now * this.r + this.offset - this.newest, span: (now - this.lastArrival) * this.r });
      if (this.gaps.length > WINDOW_ARRIVALS) this.gaps.shift();
      this.delay = this.fitDelay();
    }
    this.newest = tick;
    this.lastArrival = now;
  }

  /** The render tick for a frame drawn now (fractional host ticks). Call once per frame. */
  renderTick(now: number): number {
    if (this.newest < 0) return 0;
    const target = now * this.r + this.offset - this.delay;
    if (this.render === null || Math.abs(target - this.render) > 250 * this.r) {
      this.render = target;
    } else {
      // Ahead of the target means drawing past the data soon (a latency
      // jump, a longer delay): slow down hard, to half speed. Behind it only
      // means drawing a little late: catch up gently, at most 10 % faster.
      const step = Math.max(0, now - this.lastNow) * this.r;
      const err = target - (this.render + step);
      this.render += step * (1 + Math.max(-0.5, Math.min(0.1, err * 0.1)));
    }
    this.lastNow = now;
    return this.render;
  }

  /** The smallest delay whose dry time over the window stays within budget (bisection). */
  private fitDelay(): number {
    let total = 0;
    for (const g of this.gaps) total += g.span;
    const allowed = this.budget * total;
    const dryAt = (d: number): number => {
      let s = 0;
      for (const g of this.gaps) if (g.gap > d) s += g.gap - d;
      return s;
    };
    let lo = 0;
    let hi = this.maxDelay;
    for (let i = 0; i < 24; i++) {
      const mid = (lo + hi) / 2;
      if (dryAt(mid) <= allowed) hi = mid;
      else lo = mid;
    }
    // Half a tick of margin for the render clock's slewing.
    return Math.min(this.maxDelay, Math.max(this.minDelay, hi + 0.5));
  }
}
