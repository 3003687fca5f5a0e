import { lerpEntity, type Entity, type Schema } from '../wire/schema.js';
import type { PendingStep } from './entity-prediction.js';

/** Advances the local player's entity by one tick of input: the same code the host runs for it. */
export type PredictStep<I, F extends string> = (entity: Entity<F>, input: I, dt: number) => void;

export interface PredictorOptions<I, F extends string> {
  schema: Schema<F>;
  /** Omit to send inputs without predicting (the local entity is then interpolated like the rest). */
  step?: PredictStep<I, F>;
  /** Seconds per tick. */
  dt: number;
  /** Fields a correction slides instead of jumping (positions). */
  smoothFields: readonly F[];
  /** A correction's remaining offset shrinks by a factor e every this many ms (default 100). */
  smoothingMs?: number;
  /** An offset longer than this is dropped at once (a jump), not slid (default Infinity). */
  snapDistance?: number;
  /** The slide never moves the entity faster than this, units per second (default Infinity): a cap on what a frame can show. */
  maxCorrectionSpeed?: number;
  /** Inputs predicted beyond the host's acknowledgement before prediction pauses (default 120). */
  maxPending?: number;
}

/** A reconciliation that changed the local player. */
export interface Correction {
  /** The input sequence the host confirmed. */
  ackSeq: number;
  /** Distance over the smoothed fields between our prediction for ackSeq and the host's state. */
  error: number;
  /** How far the local player's present moved when the pending inputs were replayed. */
  shift: number;
  /** The shift was too big to slide and was shown as a jump. */
  snapped: boolean;
  /**
   * Ticks since the previous snapshot in which the host repeated our last
   * input because the next one was late: a correction with lateTicks > 0 is
   * the network's doing; one without is a real misprediction (a collision
   * the client could not foresee).
   */
  lateTicks: number;
}

interface Pending<I, F extends string> {
  seq: number;
  input: I;
  after: Entity<F> | null;
}

/**
 * Client-side prediction with server reconciliation (Gambetta; Valve). Each
 * tick the local input is applied at once and remembered with the state it
 * produced. When a snapshot confirms input N, the remembered state for N is
 * compared with the host's: equal means nothing to do; different means the
 * host's state is taken and inputs N+1… are replayed on it. The visible
 * difference becomes an offset that decays over `smoothingMs`, so small
 * corrections slide instead of snapping.
 */
export class Predictor<I, F extends string> {
  private readonly pending: Pending<I, F>[] = [];
  private readonly recent: { seq: number; input: I }[] = [];
  private confirmed: { seq: number; state: Entity<F> } | null = null;
  private cur: Entity<F> | null = null;
  private prev: Entity<F> | null = null;
  private nextSeq = 1;
  private ack = 0;
  private readonly offset: number[];
  private readonly smoothIdx: number[];
  private readonly smoothingMs: number;
  private readonly snapDistance: number;
  private readonly maxCorrectionSpeed: number;
  private readonly maxPending: number;
  private snapPending = 0;
  private compared = 0;

  constructor(private readonly o: PredictorOptions<I, F>) {
    this.smoothIdx = o.smoothFields.map((f) => o.schema.indexOf(f));
    this.offset = o.smoothFields.map(() => 0);
    this.smoothingMs = o.smoothingMs ?? 100;
    this.snapDistance = o.snapDistance ?? Infinity;
    this.maxCorrectionSpeed = o.maxCorrectionSpeed ?? Infinity;
    this.maxPending = o.maxPending ?? 120;
  }

  /** True once there is a state to predict from (or nothing to predict). */
  get ready(): boolean {
    return !this.o.step || this.cur !== null;
  }

  get lastAck(): number {
    return this.ack;
  }

  /** Reconciliations in which a prediction was compared with the host's state. */
  get checked(): number {
    return this.compared;
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  /** Inputs not yet confirmed, oldest first, with the local entity after each: what replays of other entities need. */
  get steps(): readonly PendingStep<I, F>[] {
    return this.pending;
  }

  /** The predicted state after the newest input (unsmoothed). */
  get current(): Readonly<Entity<F>> | null {
    return this.cur;
  }

  /** Takes the host's state of the local entity to predict from. */
  start(auth: Readonly<Entity<F>>): void {
    if (!this.o.step || this.cur) return;
    this.cur = this.o.schema.copy(auth);
    this.prev = this.cur;
    this.confirmed = { seq: this.ack, state: this.o.schema.copy(auth) };
  }

  /** Applies one tick of local input. Returns its sequence, or null when too far ahead of the host. */
  advance(input: I): number | null {
    if (this.pending.length >= this.maxPending) return null;
    const seq = this.nextSeq++;
    let after: Entity<F> | null = null;
    if (this.o.step && this.cur) {
      after = this.o.schema.copy(this.cur);
      this.o.step(after, input, this.o.dt);
      this.o.schema.quantize(after);
      this.prev = this.cur;
      this.cur = after;
    }
    this.pending.push({ seq, input, after });
    this.recent.push({ seq, input });
    if (this.recent.length > 16) this.recent.shift();
    return seq;
  }

  /**
   * Inputs for the next packet, oldest first: everything not yet applied by
   * the host, and never fewer than `atLeast` (the last ~100 ms), so a lost
   * packet costs nothing. At most `max`, the oldest, so the host's sequence
   * never has a hole.
   */
  outgoing(atLeast: number, max: number): { firstSeq: number; inputs: I[] } {
    let list: { seq: number; input: I }[] = this.pending;
    if (list.length < atLeast) list = this.recent.slice(-atLeast);
    list = list.slice(0, max);
    return { firstSeq: list[0]?.seq ?? this.nextSeq, inputs: list.map((p) => p.input) };
  }

  /** Reconciles with a snapshot whose host state for the local entity is `auth` after input `ackSeq`. */
  reconcile(ackSeq: number, auth: Readonly<Entity<F>>, lateTicks = 0): Correction | null {
    if (ackSeq < this.ack) return null; // an older snapshot than one already used
    this.ack = ackSeq;
    const s = this.o.schema;
    const i = this.pending.findIndex((p) => p.seq === ackSeq);
    const expected = i >= 0 ? this.pending[i]!.after : this.confirmed?.seq === ackSeq ? this.confirmed.state : null;
    let drop = 0;
    while (drop < this.pending.length && this.pending[drop]!.seq <= ackSeq) drop++;
    this.pending.splice(0, drop);
    if (!this.o.step || !this.cur) return null;
    this.confirmed = { seq: ackSeq, state: s.copy(auth) };
    if (expected) this.compared++;
    if (expected && s.equal(expected, auth)) return null;

    // Replay the inputs the host has not applied yet on top of its state.
    const before = this.cur;
    let state = s.copy(auth);
    let prev = state;
    for (const p of this.pending) {
      prev = state;
      state = s.copy(state);
      this.o.step(state, p.input, this.o.dt);
      s.quantize(state);
      p.after = state;
    }
    this.prev = prev;
    this.cur = state;
    let shift2 = 0;
    this.smoothIdx.forEach((fi, k) => {
      const f = s.fields[fi]!;
      const d = before[f] - state[f];
      shift2 += d * d;
      this.offset[k]! += d;
    });
    const shift = Math.sqrt(shift2);
    let snapped = false;
    if (this.offsetLength() > this.snapDistance) {
      this.snapPending = Math.max(this.snapPending, this.offsetLength());
      this.offset.fill(0);
      snapped = true;
    }
    if (!expected && shift === 0) return null;
    return { ackSeq, error: expected ? this.distance(expected, auth) : 0, shift, snapped, lateTicks };
  }

  /**
   * The local entity to draw: the last two predicted ticks blended by
   * `alpha`, plus what is left of past corrections. Also returns how far the
   * smoothing moved it since the previous frame, and the length of a jump
   * shown this frame (a correction over snapDistance), if any.
   */
  render(alpha: number, frameMs: number): { entity: Entity<F>; visibleCorrection: number; snapped: number } | null {
    if (!this.cur) return null;
    const s = this.o.schema;
    const e = this.prev ? lerpEntity(s, this.prev, this.cur, alpha) : s.copy(this.cur);
    const before = this.offsetLength();
    if (before > 0) {
      const dt = Math.max(0, frameMs);
      const shrink = Math.min(before * (1 - Math.exp(-dt / this.smoothingMs)), (this.maxCorrectionSpeed * dt) / 1000);
      const k = before < 1e-6 ? 0 : (before - shrink) / before;
      for (let j = 0; j < this.offset.length; j++) this.offset[j]! *= k;
    }
    this.smoothIdx.forEach((fi, j) => {
      const f = s.fields[fi]!;
      e[f] += this.offset[j]!;
    });
    const snapped = this.snapPending;
    this.snapPending = 0;
    return { entity: e, visibleCorrection: before - this.offsetLength(), snapped };
  }

  private offsetLength(): number {
    return Math.hypot(...this.offset);
  }

  private distance(a: Readonly<Entity<F>>, b: Readonly<Entity<F>>): number {
    let d2 = 0;
    for (const fi of this.smoothIdx) {
      const f = this.o.schema.fields[fi]!;
      d2 += (a[f] - b[f]) ** 2;
    }
    return Math.sqrt(d2);
  }
}
