import { describe, expect, it } from 'vitest';
import { Schema, type Entity } from '../wire/schema.js';
import { EntityPredictor, type PendingStep } from './entity-prediction.js';

// The arithmetic of predicted entities, without a network: a player on a
// line pushes a box (id 9) ahead of it; the input is how far the player
// steps this tick.
const schema = Schema.define({ x: { precision: 1 / 16 } });
type F = 'x';
const BOX = 9;
const DT = 1 / 60;
const FRAME = 1000 / 60;
const e = (x: number): Entity<F> => ({ x });

function predictor(o: { snapDistance?: number; maxCorrectionSpeed?: number; releaseGap?: number; near?: number } = {}) {
  let near = o.near ?? 100;
  const p = new EntityPredictor<number, F>(
    schema,
    {
      select: (me, drawn) => {
        const b = drawn.get(BOX);
        return b && Math.abs(b.x - me.x) < near ? [BOX] : [];
      },
      step: ({ local, entities }) => {
        const b = entities.get(BOX);
        if (b && b.x < local.x + 10) b.x = local.x + 10;
      },
      snapDistance: o.snapDistance,
      maxCorrectionSpeed: o.maxCorrectionSpeed,
      releaseGap: o.releaseGap,
    },
    ['x'],
    DT,
  );
  return { p, setNear: (n: number) => (near = n) };
}

/** Pending inputs as the Predictor keeps them: the player steps `dx` each, from `from`. */
function walk(firstSeq: number, from: number, steps: number[]): PendingStep<number, F>[] {
  let x = from;
  return steps.map((dx, k) => ({ seq: firstSeq + k, input: dx, after: e((x += dx)) }));
}

describe('EntityPredictor', () => {
  it('moves a chosen entity with the local input in the tick of the input, and finds no correction when the host agrees', () => {
    const { p } = predictor();
    const world = new Map([[BOX, e(30)]]);
    const steps = walk(1, 0, [5, 5, 5, 5, 5]);
    // Tick 1: the box is chosen (from the snapshot, with the pending input replayed).
    p.advance(steps[0]!, world, { ackSeq: 0, entities: world }, steps.slice(0, 1));
    expect(p.predicted.has(BOX)).toBe(true);
    for (let k = 1; k < 5; k++) p.advance(steps[k]!, world, { ackSeq: 0, entities: world }, steps.slice(0, k + 1));
    const drawn = new Map(world);
    // Taken from its interpolated place (30) to its predicted one (35): slid, not popped.
    p.render(1, FRAME, drawn);
    expect(drawn.get(BOX)!.x).toBeCloseTo(30 + 5 * (1 - Math.exp(-FRAME / 100)), 9);
    for (let f = 0; f < 120; f++) p.render(1, FRAME, drawn); // 2 s: the slide decays to nothing
    expect(drawn.get(BOX)!.x).toBe(35); // the player at 25 pushed it to 35 in tick 5
    // The host applied inputs 1–3 exactly as predicted: box at 30 (player at 15 has not reached it yet… 15 + 10 = 25 < 30).
    expect(p.reconcile(3, new Map([[BOX, e(30)]]), steps.slice(3), world)).toEqual([]);
  });

  it('corrects to the host and slides the difference in at most maxCorrectionSpeed, converging to exactly the host', () => {
    const { p } = predictor({ maxCorrectionSpeed: 120 });
    const world = new Map([[BOX, e(50)]]);
    const steps = walk(1, 0, [0, 0, 0, 0]);
    p.advance(steps[0]!, world, { ackSeq: 0, entities: world }, steps.slice(0, 1));
    for (let k = 1; k < 4; k++) p.advance(steps[k]!, world, { ackSeq: 0, entities: world }, steps.slice(0, k + 1));
    // Someone else pushed the box to 80 on the host.
    p.render(1, FRAME, new Map(world)); // drawn predicted, where it was interpolated: 50
    const c = p.reconcile(2, new Map([[BOX, e(80)]]), steps.slice(2), world);
    expect(c).toEqual([{ id: BOX, ackSeq: 2, shift: 30, snapped: false }]);
    const xs: number[] = [];
    for (let f = 0; f < 120; f++) {
      const drawn = new Map(world);
      p.render(1, FRAME, drawn);
      xs.push(drawn.get(BOX)!.x);
    }
    expect(xs[0]).toBe(52); // 50 + one frame of the slide: 120 px/s × 1/60 s
    for (let i = 1; i < xs.length; i++) expect(Math.abs(xs[i]! - xs[i - 1]!)).toBeLessThanOrEqual(2 + 1e-9);
    expect(xs.at(-1)).toBe(80);
    expect(p.sliding.size).toBe(0);
  });

  it('a correction before the entity was first drawn predicted slides from where it was drawn, once', () => {
    const { p } = predictor({ maxCorrectionSpeed: 120 });
    const world = new Map([[BOX, e(50)]]);
    const steps = walk(1, 0, [0]);
    p.advance(steps[0]!, world, { ackSeq: 0, entities: world }, steps);
    p.reconcile(1, new Map([[BOX, e(80)]]), [], world);
    const drawn = new Map(world);
    p.render(1, FRAME, drawn);
    expect(drawn.get(BOX)!.x).toBe(52); // from 50 towards 80, not from 20
  });

  it('shows a correction past snapDistance as a jump', () => {
    const { p } = predictor({ snapDistance: 40 });
    const world = new Map([[BOX, e(50)]]);
    const steps = walk(1, 0, [0]);
    p.advance(steps[0]!, world, { ackSeq: 0, entities: world }, steps);
    p.render(1, FRAME, new Map(world));
    expect(p.reconcile(1, new Map([[BOX, e(500)]]), [], world)).toEqual([{ id: BOX, ackSeq: 1, shift: 450, snapped: true }]);
    const drawn = new Map(world);
    expect(p.render(1, FRAME, drawn).snapped).toBe(450);
    expect(drawn.get(BOX)!.x).toBe(500);
  });

  it('goes back to interpolation by sliding from where it was drawn, and only once the past is within releaseGap', () => {
    const { p, setNear } = predictor({ maxCorrectionSpeed: 600, releaseGap: 20 });
    const world = new Map([[BOX, e(30)]]);
    const steps = walk(1, 0, [10, 10, 10]);
    for (let k = 0; k < 3; k++) p.advance(steps[k]!, world, { ackSeq: 0, entities: world }, steps.slice(0, k + 1));
    let drawn = new Map(world);
    for (let f = 0; f < 120; f++) p.render(1, FRAME, drawn); // 2 s: the slide decays to nothing
    expect(drawn.get(BOX)!.x).toBe(40); // pushed: predicted present
    setNear(0); // no longer chosen
    p.advance({ seq: 4, input: 0, after: e(30) }, drawn, { ackSeq: 0, entities: world }, [...steps, { seq: 4, input: 0, after: e(30) }]);
    // The interpolated past (30) is 10 px from the present (40): within releaseGap, so it goes back now, sliding.
    drawn = new Map([[BOX, e(30)]]);
    const f = p.render(1, FRAME, drawn);
    expect(p.predicted.has(BOX)).toBe(false);
    expect(drawn.get(BOX)!.x).toBeCloseTo(40 - Math.min(10 * (1 - Math.exp(-FRAME / 100)), 10), 9);
    expect(f.snapped).toBe(0);
    for (let k = 0; k < 120; k++) {
      drawn = new Map([[BOX, e(30)]]);
      p.render(1, FRAME, drawn);
    }
    expect(drawn.get(BOX)!.x).toBe(30);
    expect(p.sliding.size).toBe(0);
  });

  it('stays predicted while its past is further than releaseGap (a reset not yet interpolated)', () => {
    const { p, setNear } = predictor({ releaseGap: 20, snapDistance: 100 });
    const world = new Map([[BOX, e(30)]]);
    const steps = walk(1, 0, [0]);
    p.advance(steps[0]!, world, { ackSeq: 0, entities: world }, steps);
    setNear(0);
    p.advance({ seq: 2, input: 0, after: e(0) }, world, { ackSeq: 0, entities: world }, [...steps, { seq: 2, input: 0, after: e(0) }]);
    const drawn = new Map([[BOX, e(300)]]); // the interpolated past is elsewhere
    p.render(1, FRAME, drawn);
    expect(p.predicted.has(BOX)).toBe(true);
    expect(drawn.get(BOX)!.x).toBe(30);
  });

  it('forgets an entity the host removed', () => {
    const { p } = predictor();
    const world = new Map([[BOX, e(30)]]);
    const steps = walk(1, 0, [0]);
    p.advance(steps[0]!, world, { ackSeq: 0, entities: world }, steps);
    expect(p.reconcile(1, new Map(), [], world)).toEqual([]);
    expect(p.predicted.size).toBe(0);
    const drawn = new Map<number, Entity<F>>();
    p.render(1, FRAME, drawn);
    expect(drawn.size).toBe(0);
  });
});
