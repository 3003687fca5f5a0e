import { describe, expect, it } from 'vitest';
import { seededRandom } from '../transport/rng.js';
import { ByteReader, WireError } from './bytes.js';
import { decodeDelta, deltaBytes } from './delta.js';
import { Schema, type EntityMap } from './schema.js';
import { hashEntities } from './state-hash.js';

const schema = Schema.define({
  x: { precision: 1 / 16 },
  y: { precision: 1 / 16 },
  hp: { interpolate: 'step' },
});
type F = (typeof schema)['fields'][number];

function world(rand: () => number, n: number): EntityMap<F> {
  const m: EntityMap<F> = new Map();
  for (let i = 0; i < n; i++) {
    if (rand() < 0.2) continue;
    const e = schema.blank();
    e.x = Math.round(rand() * 16000) / 16;
    e.y = Math.round(rand() * 8000) / 16 - 250;
    e.hp = rand() < 0.5 ? 100 : Math.floor(rand() * 100);
    m.set(Math.floor(i * 7 + rand() * 5), e);
  }
  return m;
}

const decode = (base: EntityMap<F> | null, bytes: Uint8Array): EntityMap<F> => decodeDelta(schema, base, new ByteReader(bytes));

describe('delta coding', () => {
  it('rebuilds any world from any baseline, exactly (seeded random worlds)', () => {
    const rand = seededRandom(42);
    for (let round = 0; round < 200; round++) {
      const base = round % 5 === 0 ? null : world(rand, 40);
      const next = world(rand, 40);
      const got = decode(base, deltaBytes(schema, base, next));
      expect(hashEntities(schema, got)).toBe(hashEntities(schema, next));
      expect([...got.keys()].sort((a, b) => a - b)).toEqual([...next.keys()].sort((a, b) => a - b));
    }
  });

  it('sends nothing for unchanged entities and only the fields that changed', () => {
    const base = world(seededRandom(1), 20);
    expect(deltaBytes(schema, base, base)).toEqual(new Uint8Array([0]));
    const next = new Map(base);
    const [id, e] = [...base][3]!;
    next.set(id, { ...e, x: e.x + 1 });
    // count, id gap, header with one bit, one small delta
    expect(deltaBytes(schema, base, next).length).toBeLessThanOrEqual(4);
  });

  it('codes removals and an all-zero new entity', () => {
    const base: EntityMap<F> = new Map([[5, { x: 1, y: 2, hp: 3 }]]);
    const next: EntityMap<F> = new Map([[9, schema.blank()]]);
    const got = decode(base, deltaBytes(schema, base, next));
    expect([...got]).toEqual([[9, { x: 0, y: 0, hp: 0 }]]);
  });

  it('codes against where a moving entity was heading, exactly, and smaller', () => {
    const moving = Schema.define({
      x: { precision: 1 / 16, velocity: 'vx' },
      vx: { precision: 1 / 16 },
      y: { precision: 1 / 16 },
    });
    const rand = seededRandom(11);
    const mk = (): EntityMap<'x' | 'vx' | 'y'> => {
      const m: EntityMap<'x' | 'vx' | 'y'> = new Map();
      for (let id = 0; id < 20; id++) {
        m.set(id, { x: Math.round(rand() * 16000) / 16, vx: Math.round((rand() * 600 - 300) * 16) / 16, y: Math.round(rand() * 160) / 16 });
      }
      return m;
    };
    for (let round = 0; round < 100; round++) {
      const base = mk();
      const next = rand() < 0.5 ? mk() : base;
      const dt = Math.floor(rand() * 10) / 60;
      const got = decodeDelta(moving, base, new ByteReader(deltaBytes(moving, base, next, dt)), dt);
      expect(hashEntities(moving, got)).toBe(hashEntities(moving, next));
    }
    // Twenty entities gliding at constant speed for 3 ticks: against the heading nothing changed.
    const base = mk();
    const dt = 3 / 60;
    const glided: EntityMap<'x' | 'vx' | 'y'> = new Map(
      [...base].map(([id, e]) => [id, moving.quantize({ ...e, x: e.x + e.vx * dt })] as const),
    );
    expect(deltaBytes(moving, base, glided, dt).length).toBeLessThan(deltaBytes(moving, base, glided, 0).length / 5);
    const still = decodeDelta(moving, base, new ByteReader(deltaBytes(moving, base, glided, dt)), dt);
    expect(hashEntities(moving, still)).toBe(hashEntities(moving, glided));
  });

  it('rejects hostile bytes with WireError only', () => {
    const rand = seededRandom(7);
    const base = world(rand, 10);
    for (let i = 0; i < 2000; i++) {
      const junk = new Uint8Array(1 + Math.floor(rand() * 24)).map(() => Math.floor(rand() * 256));
      try {
        decode(base, junk);
      } catch (err) {
        expect(err).toBeInstanceOf(WireError);
      }
    }
    // A field mask naming fields the schema does not have.
    expect(() => decode(null, new Uint8Array([1, 0, 0x7f]))).toThrow(/field mask/);
  });
});
