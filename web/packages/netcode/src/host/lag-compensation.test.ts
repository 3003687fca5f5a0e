import { describe, expect, it } from 'vitest';
import { Schema } from '../wire/schema.js';
import { LagCompensator } from './lag-compensation.js';

const schema = Schema.define({ x: { snapOver: 100 }, alive: { interpolate: 'step' } });

describe('LagCompensator', () => {
  const lag = new LagCompensator(schema, { tickRate: 60 });
  for (let t = 1; t <= 100; t++) lag.record(t, new Map([[7, { x: t * 10, alive: t < 95 ? 1 : 0 }]]));

  it('returns an entity as it was at a fractional tick, interpolated', () => {
    expect(lag.at(7, 90.25, 100)).toEqual({ x: 902.5, alive: 1 });
    expect(lag.at(7, 94.5, 100)?.alive).toBe(1); // step fields take the earlier tick
  });

  it('rewinds no further than 200 ms (12 ticks at 60 Hz), and never into the future', () => {
    expect(lag.clampTick(50, 100)).toBe(88);
    expect(lag.at(7, 50, 100)?.x).toBe(880);
    expect(lag.at(7, 120, 100)?.x).toBe(1000);
  });

  it('knows nothing of entities that did not exist', () => {
    expect(lag.at(8, 95, 100)).toBeNull();
  });

  it('a shorter cap is honoured; a longer one is not', () => {
    expect(new LagCompensator(schema, { tickRate: 60, maxRewindMs: 100 }).clampTick(0, 100)).toBe(94);
    expect(new LagCompensator(schema, { tickRate: 60, maxRewindMs: 1000 }).clampTick(0, 100)).toBe(88);
  });
});
