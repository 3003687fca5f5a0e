import { describe, expect, it } from 'vitest';
import { Schema, type Entity } from '../wire/schema.js';
import { Predictor } from './prediction.js';

const schema = Schema.define({ x: { precision: 1 / 16 }, vx: { precision: 1 / 16 } });
type F = (typeof schema)['fields'][number];
const step = (e: Entity<F>, input: number, dt: number): void => {
  e.vx = input * 120;
  e.x += e.vx * dt;
};

function predictor(extra: { smoothingMs?: number; snapDistance?: number; maxCorrectionSpeed?: number } = {}) {
  const p = new Predictor<number, F>({ schema, step, dt: 1 / 60, smoothFields: ['x'], ...extra });
  p.start({ x: 0, vx: 0 });
  return p;
}

/** The host's own run of the same inputs: state after each sequence. */
function hostRun(inputs: number[], from = { x: 0, vx: 0 }): Entity<F>[] {
  const out: Entity<F>[] = [];
  let e = schema.copy(from);
  for (const i of inputs) {
    e = schema.copy(e);
    step(e, i, 1 / 60);
    schema.quantize(e);
    out.push(e);
  }
  return out;
}

describe('Predictor', () => {
  it('agrees with the host when nothing went wrong: no correction, nothing to smooth', () => {
    const p = predictor();
    const inputs = [1, 1, 1, 0, -1, -1, 1, 1, 0, 0];
    for (const i of inputs) p.advance(i);
    const host = hostRun(inputs);
    expect(p.reconcile(4, host[3]!)).toBeNull();
    expect(p.reconcile(8, host[7]!)).toBeNull();
    expect(p.checked).toBe(2);
    expect(p.pendingCount).toBe(2);
    expect(p.current).toEqual(host[9]);
    expect(p.render(1, 16)?.visibleCorrection).toBe(0);
  });

  it('replays pending inputs on the host state, and slides the difference in', () => {
    const p = predictor({ smoothingMs: 100 });
    const inputs = [1, 1, 1, 1, 1, 1];
    for (const i of inputs) p.advance(i);
    // The host was pushed back 6 px at input 3 (a collision we could not see).
    const host = hostRun([1, 1, 1]);
    const pushed = { ...host[2]!, x: host[2]!.x - 6 };
    const c = p.reconcile(3, pushed);
    expect(c).toMatchObject({ ackSeq: 3, error: 6, shift: 6, snapped: false });
    expect(p.current).toEqual(hostRun([1, 1, 1], pushed)[2]);
    // Drawn where it was, then moving 6 px over ~100 ms: 15 % in the first 60 fps frame.
    const f1 = p.render(1, 1000 / 60)!;
    expect(f1.visibleCorrection).toBeCloseTo(6 * (1 - Math.exp(-1 / 6)), 6);
    expect(f1.entity.x).toBeCloseTo(p.current!.x + 6 - f1.visibleCorrection, 6);
    let total = f1.visibleCorrection;
    for (let i = 0; i < 60; i++) total += p.render(1, 1000 / 60)!.visibleCorrection;
    expect(total).toBeCloseTo(6, 3);
  });

  it('caps how much a frame may show, and jumps when the correction is too big to slide', () => {
    const capped = predictor({ maxCorrectionSpeed: 60 });
    for (let i = 0; i < 4; i++) capped.advance(1);
    capped.reconcile(2, { x: -40, vx: 120 });
    expect(capped.render(1, 1000 / 60)!.visibleCorrection).toBeCloseTo(1, 6);

    const snappy = predictor({ snapDistance: 30 });
    for (let i = 0; i < 4; i++) snappy.advance(1);
    const c = snappy.reconcile(2, { x: -40, vx: 120 });
    expect(c?.snapped).toBe(true);
    expect(snappy.render(1, 16)).toMatchObject({ visibleCorrection: 0 });
  });

  it('sends at least the last 100 ms of inputs, and everything unacknowledged', () => {
    const p = predictor();
    for (let i = 1; i <= 20; i++) p.advance(i % 3);
    expect(p.outgoing(6, 120)).toMatchObject({ firstSeq: 1 });
    expect(p.outgoing(6, 120).inputs).toHaveLength(20);
    p.reconcile(18, hostRun(Array.from({ length: 18 }, (_, k) => (k + 1) % 3))[17]!);
    expect(p.outgoing(6, 120)).toMatchObject({ firstSeq: 15 });
    expect(p.outgoing(6, 120).inputs).toHaveLength(6);
    expect(p.outgoing(6, 3)).toMatchObject({ firstSeq: 15, inputs: [0, 1, 2] }); // oldest first: no holes
  });

  it('stops predicting when the host stops acknowledging', () => {
    const p = new Predictor<number, F>({ schema, step, dt: 1 / 60, smoothFields: ['x'], maxPending: 5 });
    p.start({ x: 0, vx: 0 });
    const seqs = Array.from({ length: 7 }, () => p.advance(1));
    expect(seqs).toEqual([1, 2, 3, 4, 5, null, null]);
  });
});
