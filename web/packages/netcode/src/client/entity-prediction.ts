import { lerpEntity, type Entity, type EntityMap, type ReadonlyEntityMap, type Schema } from '../wire/schema.js';

/**
 * Objects other than the local player that its input moves (a ball it
 * pushes), predicted like the player: NetClientOptions.predictEntities.
 *
 * @example
 * predictEntities: {
 *   // Predict the ball while we are near it; interpolate it otherwise.
 *   select: (me, drawn, predicted) => {
 *     const ball = drawn.get(BALL);
 *     const reach = predicted.has(BALL) ? 200 : 120; // hysteresis: no flapping at the edge
 *     return ball && Math.hypot(ball.x - me.x, ball.y - me.y) < reach ? [BALL] : [];
 *   },
 *   // The host's rules for the ball, for one tick: we push it, then it rolls.
 *   step: ({ local, entities, dt }) => {
 *     const ball = entities.get(BALL);
 *     if (ball) { pushBall(ball, local); rollBall(ball, dt); }
 *   },
 *   smoothFields: ['x', 'y'],
 * }
 */
export interface PredictedEntities<I, F extends string> {
  /**
   * The entities to predict from the next tick on; called once per tick.
   * `local` is the local player as predicted after this tick, `drawn` every
   * entity as the last frame drew it, `predicted` the ids predicted now
   * (to keep one a little longer than you would start one: hysteresis).
   * An entity not returned goes back to interpolation, slid, not popped.
   */
  select(local: Readonly<Entity<F>>, drawn: ReadonlyEntityMap<F>, predicted: ReadonlySet<number>): Iterable<number>;
  /**
   * One tick of the host's rules for these entities, given the local
   * player after its own move: change `entities` in place. Rounding is
   * done for you afterwards (schema.quantize), as the host must do too.
   */
  step(tick: PredictedTick<I, F>): void;
  /** Fields a correction or a switch to or from interpolation slides (default: NetClientOptions.smoothFields). */
  smoothFields?: readonly F[];
  /** Time constant of that slide, ms (default 100). */
  smoothingMs?: number;
  /** A slide longer than this is shown as a jump (default Infinity): a goal reset, a respawn. */
  snapDistance?: number;
  /** The slide never moves an entity faster than this, units/s (default Infinity). */
  maxCorrectionSpeed?: number;
  /**
   * An entity no longer chosen goes back to interpolation at the first frame
   * where its interpolated past is at most this far from where it is drawn
   * (default snapDistance). A moving object's past and present are apart by
   * its speed times the interpolation delay plus the input lead; a small
   * value waits until it is slow or at rest, so the switch needs no slide.
   */
  releaseGap?: number;
}

/** What PredictedEntities.step gets for one tick. */
export interface PredictedTick<I, F extends string> {
  /**
   * The local player after this tick's input (read-only: its own
   * prediction is the exact replay of the host's movement code, so objects
   * may be pushed by it but not push it back).
   */
  readonly local: Readonly<Entity<F>>;
  /** The predicted entities before this tick, by id: move them in place. */
  readonly entities: ReadonlyMap<number, Entity<F>>;
  readonly input: I;
  /**
   * The input's sequence number. On each snapshot the ticks after the one
   * the host confirmed are run again with the same numbers: key game state
   * the snapshots do not carry (a kick cooldown) to it.
   */
  readonly seq: number;
  readonly dt: number;
  /** Every entity as the last frame drew it: others to collide with (remote players are in the past). */
  readonly drawn: ReadonlyEntityMap<F>;
}

/** A snapshot moved a predicted entity's present: the host's state was taken and the pending inputs replayed. */
export interface EntityCorrection {
  /** The entity's id. */
  id: number;
  /** The input sequence the host confirmed. */
  ackSeq: number;
  /** How far the entity's predicted present moved, over the smoothed fields. */
  shift: number;
  /** The shift was over snapDistance and shown as a jump. */
  snapped: boolean;
}

/** One input of the local player's, as the Predictor holds it: what replays need. */
export interface PendingStep<I, F extends string> {
  readonly seq: number;
  readonly input: I;
  /** The local player after it (null when the local player is not predicted). */
  readonly after: Readonly<Entity<F>> | null;
}

interface Track<F extends string> {
  prev: Entity<F>;
  cur: Entity<F>;
  /** No longer chosen: goes back to interpolation at the first frame where that is not a jump. */
  releasing: boolean;
  /** State after each input not yet confirmed (and the newest confirmed one). */
  after: Map<number, Entity<F>>;
}

/** How an entity is drawn while a correction or a switch of mode is being slid in. */
interface Drawn<F extends string> {
  offset: number[];
  /** Set by a switch of mode: the old mode's base this frame, to take the offset from. */
  switchFrom: 'interpolated' | { prev: Entity<F>; cur: Entity<F> } | null;
}

export interface EntityFrame {
  /** Largest per-frame slide of any entity this frame (distance over the smoothed fields). */
  visibleCorrection: number;
  /** Longest slide shown as a jump this frame, else 0. */
  snapped: number;
}

/**
 * Prediction of objects the local player touches. Each tick the game's
 * step runs over them with the local player's input; each snapshot takes
 * the host's state of every one and replays the unconfirmed inputs on it
 * (the local player's replayed states drive the replay). A changed present
 * becomes an offset on the drawn position that decays like the local
 * player's; so does the gap between an entity's interpolated past and its
 * predicted present when it starts or stops being predicted.
 */
export class EntityPredictor<I, F extends string> {
  private readonly tracks = new Map<number, Track<F>>();
  private readonly drawn = new Map<number, Drawn<F>>();
  private readonly smoothIdx: number[];
  private readonly smoothingMs: number;
  private readonly snapDistance: number;
  private readonly maxCorrectionSpeed: number;
  private readonly releaseGap: number;
  private readonly ids = new Set<number>();
  private ack = 0;
  private snapPending = 0;

  constructor(
    private readonly schema: Schema<F>,
    private readonly o: PredictedEntities<I, F>,
    smoothFields: readonly F[],
    private readonly dt: number,
  ) {
    this.smoothIdx = (o.smoothFields ?? smoothFields).map((f) => schema.indexOf(f));
    this.smoothingMs = o.smoothingMs ?? 100;
    this.snapDistance = o.snapDistance ?? Infinity;
    this.maxCorrectionSpeed = o.maxCorrectionSpeed ?? Infinity;
    this.releaseGap = o.releaseGap ?? this.snapDistance;
  }

  /** Ids predicted now. */
  get predicted(): ReadonlySet<number> {
    return this.ids;
  }

  /**
   * One tick: steps the predicted entities with this input, then asks the
   * game which to predict from now on. A newly chosen entity starts from the
   * newest snapshot with every unconfirmed input replayed on it.
   */
  advance(
    step: PendingStep<I, F>,
    drawn: ReadonlyEntityMap<F>,
    newest: { ackSeq: number; entities: ReadonlyEntityMap<F> } | null,
    pending: readonly PendingStep<I, F>[],
  ): void {
    const local = step.after;
    if (!local) return;
    if (this.tracks.size > 0) {
      const next = this.run(new Map([...this.tracks].map(([id, t]) => [id, t.cur])), step, drawn);
      for (const [id, e] of next) {
        const t = this.tracks.get(id)!;
        t.prev = t.cur;
        t.cur = e;
        t.after.set(step.seq, e);
      }
    }
    const chosen = new Set(this.o.select(local, drawn, this.ids));
    for (const [id, t] of this.tracks) t.releasing = !chosen.has(id);
    if (!newest) return;
    for (const id of chosen) {
      if (this.tracks.has(id)) continue;
      const auth = newest.entities.get(id);
      if (!auth) continue;
      const t = this.replay(new Map([[id, auth]]), newest.ackSeq, pending, drawn).get(id)!;
      this.tracks.set(id, t);
      this.ids.add(id);
      this.switched(id, 'interpolated');
    }
  }

  /**
   * A snapshot confirmed input `ackSeq`: compares each predicted entity's
   * remembered state for it with the host's, and if any differs, replays the
   * unconfirmed inputs on the host's states. Returns the entities whose
   * present moved.
   */
  reconcile(
    ackSeq: number,
    entities: ReadonlyEntityMap<F>,
    pending: readonly PendingStep<I, F>[],
    drawn: ReadonlyEntityMap<F>,
  ): EntityCorrection[] {
    if (ackSeq < this.ack) return []; // an older snapshot than one already used
    this.ack = ackSeq;
    if (this.tracks.size === 0) return [];
    const s = this.schema;
    let differs = false;
    const auth = new Map<number, Readonly<Entity<F>>>();
    for (const [id, t] of this.tracks) {
      const a = entities.get(id);
      if (!a) {
        // Gone on the host (removed): nothing to predict or slide any more.
        this.tracks.delete(id);
        this.ids.delete(id);
        this.drawn.delete(id);
        continue;
      }
      auth.set(id, a);
      const expected = t.after.get(ackSeq);
      if (!expected || !s.equal(expected, a)) differs = true;
      for (const seq of t.after.keys()) if (seq < ackSeq) t.after.delete(seq);
    }
    if (!differs) return [];
    const out: EntityCorrection[] = [];
    for (const [id, t] of this.replay(auth, ackSeq, pending, drawn)) {
      const old = this.tracks.get(id)!;
      const d = this.smoothIdx.map((fi) => old.cur[s.fields[fi]!] - t.cur[s.fields[fi]!]);
      t.releasing = old.releasing;
      this.tracks.set(id, t);
      const shift = Math.hypot(...d);
      if (shift === 0) continue;
      const view = this.drawnOf(id);
      // Not drawn predicted yet: the pending switch slides from where it was drawn to the corrected place.
      if (view.switchFrom !== 'interpolated') d.forEach((v, k) => (view.offset[k]! += v));
      const gap = Math.hypot(...view.offset);
      const snapped = gap > this.snapDistance;
      if (snapped) {
        this.snapPending = Math.max(this.snapPending, gap);
        view.offset.fill(0);
      }
      out.push({ id, ackSeq, shift, snapped });
    }
    return out;
  }

  /**
   * Draws the predicted entities into `entities` (which holds every entity
   * interpolated): the last two predicted ticks blended by `alpha`, plus what
   * is left of past corrections; entities that recently stopped being
   * predicted slide back onto their interpolated path.
   */
  render(alpha: number, frameMs: number, entities: EntityMap<F>): EntityFrame {
    const s = this.schema;
    let visible = 0;
    let snapped = this.snapPending;
    this.snapPending = 0;
    for (const [id, t] of this.tracks) if (t.releasing) this.release(id, t, alpha, entities.get(id));
    for (const [id, view] of this.drawn) {
      const t = this.tracks.get(id);
      const interpolated = entities.get(id);
      const base = t ? lerpEntity(s, t.prev, t.cur, alpha) : interpolated ? s.copy(interpolated) : null;
      if (!base) {
        this.drawn.delete(id);
        continue;
      }
      if (view.switchFrom) {
        // Where the old mode would draw it this frame, plus what was still sliding: the new offset starts there.
        const from = view.switchFrom === 'interpolated' ? interpolated : lerpEntity(s, view.switchFrom.prev, view.switchFrom.cur, alpha);
        view.switchFrom = null;
        if (from) {
          this.smoothIdx.forEach((fi, k) => (view.offset[k]! += from[s.fields[fi]!] - base[s.fields[fi]!]));
          const gap = Math.hypot(...view.offset);
          if (gap > this.snapDistance) {
            snapped = Math.max(snapped, gap);
            view.offset.fill(0);
          }
        }
      }
      const before = Math.hypot(...view.offset);
      if (before > 0) {
        const dt = Math.max(0, frameMs);
        const shrink = Math.min(before * (1 - Math.exp(-dt / this.smoothingMs)), (this.maxCorrectionSpeed * dt) / 1000);
        const k = before < 1e-6 ? 0 : (before - shrink) / before;
        for (let j = 0; j < view.offset.length; j++) view.offset[j]! *= k;
        visible = Math.max(visible, before - Math.hypot(...view.offset));
      }
      this.smoothIdx.forEach((fi, k) => (base[s.fields[fi]!] += view.offset[k]!));
      entities.set(id, base);
      if (!t && view.offset.every((v) => v === 0)) this.drawn.delete(id);
    }
    return { visibleCorrection: visible, snapped };
  }

  /** Entities drawn off their predicted or interpolated place while a slide goes on, and how far off (after this frame's part). */
  get sliding(): Map<number, number> {
    const out = new Map<number, number>();
    for (const [id, v] of this.drawn) {
      const d = Math.hypot(...v.offset);
      if (d > 0) out.set(id, d);
    }
    return out;
  }

  /**
   * Hands a no longer chosen entity back to interpolation once its
   * interpolated past is within releaseGap of where it is drawn. Until then
   * it stays predicted: with a gap over snapDistance (a goal reset predicted
   * but not yet interpolated) switching would jump it back into the past and
   * forward again; a smaller gap would be slid, and a smaller releaseGap
   * waits for a moment that needs no slide.
   */
  private release(id: number, t: Track<F>, alpha: number, interpolated: Readonly<Entity<F>> | undefined): void {
    if (interpolated && this.releaseGap < Infinity) {
      const s = this.schema;
      const base = lerpEntity(s, t.prev, t.cur, alpha);
      const offset = this.drawn.get(id)?.offset;
      const gap = Math.hypot(...this.smoothIdx.map((fi, k) => interpolated[s.fields[fi]!] - base[s.fields[fi]!] - (offset?.[k] ?? 0)));
      if (gap > this.releaseGap) return;
    }
    this.tracks.delete(id);
    this.ids.delete(id);
    this.switched(id, { prev: t.prev, cur: t.cur });
  }

  private switched(id: number, from: Drawn<F>['switchFrom']): void {
    const view = this.drawnOf(id);
    // A second switch before a frame was drawn: the first one's old mode is still what is on screen.
    if (!view.switchFrom) view.switchFrom = from;
  }

  private drawnOf(id: number): Drawn<F> {
    let v = this.drawn.get(id);
    if (!v) {
      v = { offset: this.smoothIdx.map(() => 0), switchFrom: null };
      this.drawn.set(id, v);
    }
    return v;
  }

  /** Runs the game's step once over copies of `from`, rounded. */
  private run(from: ReadonlyMap<number, Readonly<Entity<F>>>, step: PendingStep<I, F>, drawn: ReadonlyEntityMap<F>): Map<number, Entity<F>> {
    const entities = new Map([...from].map(([id, e]) => [id, this.schema.copy(e)]));
    this.o.step({ local: step.after!, entities, input: step.input, seq: step.seq, dt: this.dt, drawn });
    for (const e of entities.values()) this.schema.quantize(e);
    return entities;
  }

  /** Tracks for `auth` (states after input `ackSeq`) with every later pending input run on them. */
  private replay(
    auth: ReadonlyMap<number, Readonly<Entity<F>>>,
    ackSeq: number,
    pending: readonly PendingStep<I, F>[],
    drawn: ReadonlyEntityMap<F>,
  ): Map<number, Track<F>> {
    const tracks = new Map<number, Track<F>>();
    for (const [id, e] of auth) {
      const c = this.schema.copy(e);
      tracks.set(id, { prev: c, cur: c, releasing: false, after: new Map([[ackSeq, c]]) });
    }
    let states: ReadonlyMap<number, Readonly<Entity<F>>> = auth;
    for (const p of pending) {
      if (p.seq <= ackSeq || !p.after) continue;
      const next = this.run(states, p, drawn);
      for (const [id, e] of next) {
        const t = tracks.get(id)!;
        t.prev = t.cur;
        t.cur = e;
        t.after.set(p.seq, e);
      }
      states = next;
    }
    return tracks;
  }
}
