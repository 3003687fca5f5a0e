import { describe, expect, it } from 'vitest';
import { Validator } from './validation.js';

const DT = 1 / 60;

describe('Validator', () => {
  it('flags moves over the speed limit (with slack) and over the teleport distance', () => {
    const v = new Validator({ maxSpeed: 300, tolerance: 0.25, maxTeleport: 50 });
    expect(v.checkMove('p', { x: 0, y: 0 }, DT, 1, 0)).toBeNull();
    expect(v.checkMove('p', { x: 6, y: 0 }, DT, 2, 16)).toBeNull(); // 360 px/s: inside the 25 % slack
    expect(v.checkMove('p', { x: 16, y: 0 }, DT, 3, 33)?.kind).toBe('speed');
    expect(v.checkMove('p', { x: 100, y: 0 }, DT, 4, 50)?.kind).toBe('teleport');
    v.allowTeleport('p');
    expect(v.checkMove('p', { x: 500, y: 500 }, DT, 5, 66)).toBeNull();
  });

  it('scores violations with decay, so only a steady stream reaches the threshold', () => {
    const v = new Validator({ halfLifeMs: 1000, threshold: 10 });
    const first = v.report('p', 'speed', 1, 0, '');
    expect(first.score).toBe(1);
    expect(v.score('p', 1000)).toBeCloseTo(0.5);
    // One a second never gets there...
    let last = first;
    for (let t = 1; t <= 30; t++) last = v.report('p', 'speed', t, t * 1000, '');
    expect(v.overThreshold(last)).toBe(false);
    // ...ten in a moment do.
    for (let i = 0; i < 10; i++) last = v.report('p', 'speed', 31, 31_000, '');
    expect(v.overThreshold(last)).toBe(true);
    expect(v.report('q', 'teleport', 1, 0, '').score).toBe(5);
  });
});
