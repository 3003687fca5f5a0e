import { describe, expect, it } from 'vitest';
import { firstDivergentTick, hashEntities, HashLog } from './state-hash.js';
import { Schema } from './schema.js';

const schema = Schema.define({ x: { precision: 1 / 64 }, y: { precision: 1 / 64 } });

describe('state hash', () => {
  it('depends on state, not on insertion order, and sees one rounding step', () => {
    const a = new Map([
      [1, { x: 10, y: 20 }],
      [2, { x: -5, y: 0.5 }],
    ]);
    const b = new Map([...a].reverse());
    expect(hashEntities(schema, a)).toBe(hashEntities(schema, b));
    const c = new Map(a).set(2, { x: -5, y: 0.5 + 1 / 64 });
    expect(hashEntities(schema, c)).not.toBe(hashEntities(schema, a));
  });

  it('names the first tick where two runs disagree', () => {
    const host = new HashLog();
    const client = new HashLog();
    for (let t = 1; t <= 100; t++) {
      host.record(t, t * 7);
      if (t % 3 === 0) client.record(t, t >= 42 ? t * 7 + 1 : t * 7); // the client only saw every third
    }
    expect(firstDivergentTick(host, client)).toBe(42);
    expect(firstDivergentTick(host, new HashLog())).toBeNull();
  });

  it('keeps a bounded number of ticks', () => {
    const log = new HashLog(10);
    for (let t = 1; t <= 25; t++) log.record(t, t);
    expect(log.ticks()).toEqual([16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
  });
});
