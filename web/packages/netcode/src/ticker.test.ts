import { describe, expect, it } from 'vitest';
import { FixedTicker } from './ticker.js';

/** Runs a ticker for `ms` with updates every `frameMs`; returns the ticks and a value integrated per tick. */
function run(frameMs: number, ms: number): { ticks: number; x: number } {
  const t = new FixedTicker(60);
  let ticks = 0;
  let x = 0;
  let v = 100;
  const step = (): void => {
    ticks++;
    v -= v * 0.1 * (1 / 60);
    x += v / 60;
  };
  for (let now = 0; now < ms; now += frameMs) t.update(now, step);
  t.update(ms, step);
  return { ticks, x };
}

describe('FixedTicker', () => {
  it('runs the same ticks with the same results at 30, 60, 144 and 17 fps', () => {
    // 10 s and a few ms, so no update lands exactly on a tick boundary.
    const ref = run(1000 / 60, 10_005);
    expect(ref.ticks).toBe(600);
    for (const fps of [30, 144, 17]) expect(run(1000 / fps, 10_005)).toEqual(ref);
  });

  it('gives the blend factor between ticks, and drops time after a stall instead of spiralling', () => {
    const t = new FixedTicker(60, 5);
    let n = 0;
    t.update(0, () => n++);
    t.update(25, () => n++);
    expect(n).toBe(1);
    expect(t.alpha).toBeCloseTo(0.5, 5);
    t.update(10_025, () => n++); // a 10 s stall
    expect(n).toBe(6);
    expect(t.droppedTicks).toBeGreaterThan(500);
  });

  it('runs faster or slower on a rate', () => {
    const t = new FixedTicker(60, 100);
    let n = 0;
    t.update(0, () => n++);
    t.update(1000, () => n++, 0.97);
    expect(n).toBe(58);
  });
});
