import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { below, fuzz, fuzzInputs, hex, must, seededRandom, type Random } from '@hostrelay/fuzz';
import { countByteReads } from '../testing/byte-reads.test-util.js';
import { PacketType } from '../wire/packets.js';
import { Schema, type EntityMap, type ReadonlyEntityMap } from '../wire/schema.js';
import { hashEntities } from '../wire/state-hash.js';
import { snapshotPacket, type SentSnapshot } from '../testing/snapshot.test-util.js';
import { SnapshotDecoder, type Decoded } from './snapshot-decoder.js';

const TICK_RATE = 60;
const schema = Schema.define({
  x: { precision: 1 / 64, velocity: 'vx' },
  vx: { precision: 1 / 16 },
  y: { precision: 1 / 64 },
  kind: { interpolate: 'step' },
});
type F = (typeof schema)['fields'][number];

type Sent = SentSnapshot<F>;

/** A snapshot as the host writes one: header, then the delta against `base` (null: full). */
function snapshot(tick: number, entities: ReadonlyEntityMap<F>, base: Sent | null, hash: number | null = hashEntities(schema, entities)): Uint8Array {
  return snapshotPacket(schema, TICK_RATE, tick, entities, base, hash);
}

function world(rand: Random, n: number): EntityMap<F> {
  const m: EntityMap<F> = new Map();
  for (let i = 0; i < n; i++) {
    m.set(below(rand, 64), schema.quantize({ x: rand() * 1000, vx: (rand() - 0.5) * 400, y: rand() * 500, kind: below(rand, 4) }));
  }
  return m;
}

/** The next tick's world: most entities glide, a few turn, appear or go. */
function step(rand: Random, prev: ReadonlyEntityMap<F>, ticks: number): EntityMap<F> {
  const next: EntityMap<F> = new Map();
  for (const [id, e] of prev) {
    if (rand() < 0.03) continue;
    const vx = rand() < 0.1 ? (rand() - 0.5) * 400 : e.vx;
    next.set(id, schema.quantize({ ...e, x: e.x + (e.vx * ticks) / TICK_RATE, vx }));
  }
  if (rand() < 0.2) next.set(below(rand, 64), schema.quantize({ x: rand() * 1000, vx: 0, y: rand() * 500, kind: 1 }));
  return next;
}

function sameEntities(a: ReadonlyEntityMap<F>, b: ReadonlyEntityMap<F>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, e] of a) {
    const o = b.get(id);
    if (!o || !schema.equal(e, o)) return false;
  }
  return true;
}

const snapshotOf = (d: Decoded<F>): Extract<Decoded<F>, { kind: 'snapshot' }> => {
  if (d.kind !== 'snapshot') throw new Error(`got ${d.kind}, want a snapshot`);
  return d;
};

describe('SnapshotDecoder', () => {
  const rand = seededRandom(7);
  const first: Sent = { tick: 10, entities: world(rand, 12) };

  it('rebuilds a full snapshot and then deltas against it, checking the hash', () => {
    const dec = new SnapshotDecoder(schema, TICK_RATE);
    const full = snapshotOf(dec.decode(snapshot(first.tick, first.entities, null)));
    expect(full.header.tick).toBe(10);
    expect(full.hashOk).toBe(true);
    expect(sameEntities(full.entities, first.entities)).toBe(true);

    const later = step(rand, first.entities, 3);
    const delta = snapshotOf(dec.decode(snapshot(13, later, first)));
    expect(delta.header.baseTick).toBe(10);
    expect(delta.hashOk).toBe(true);
    expect(sameEntities(delta.entities, later)).toBe(true);
    expect(dec.hashLog.get(13)).toBe(hashEntities(schema, later));
  });

  it('skips a tick it has and a delta whose baseline it lacks', () => {
    const dec = new SnapshotDecoder(schema, TICK_RATE);
    expect(dec.decode(snapshot(first.tick, first.entities, null)).kind).toBe('snapshot');
    expect(dec.decode(snapshot(first.tick, first.entities, null)).kind).toBe('skip');
    expect(dec.decode(snapshot(20, first.entities, { tick: 9, entities: first.entities })).kind).toBe('skip');
  });

  it('reports a hash it does not reproduce, and none when the host sent none', () => {
    const dec = new SnapshotDecoder(schema, TICK_RATE);
    expect(snapshotOf(dec.decode(snapshot(1, first.entities, null, 12345))).hashOk).toBe(false);
    expect(snapshotOf(dec.decode(snapshot(2, first.entities, null, null))).hashOk).toBeNull();
    expect(dec.hashLog.ticks()).toEqual([1]);
  });

  it('calls junk bad, including a packet that is not a snapshot', () => {
    const dec = new SnapshotDecoder(schema, TICK_RATE);
    expect(dec.decode(new Uint8Array([])).kind).toBe('bad');
    expect(dec.decode(new Uint8Array([PacketType.Input, 0, 0])).kind).toBe('bad');
    const good = snapshot(5, first.entities, null);
    expect(dec.decode(good.subarray(0, good.length - 1)).kind).toBe('bad');
    // A bad packet leaves nothing behind: the whole one still decodes.
    expect(dec.decode(good).kind).toBe('snapshot');
  });

  it('keeps the newest 64 snapshots as baselines', () => {
    const dec = new SnapshotDecoder(schema, TICK_RATE);
    for (let t = 1; t <= 65; t++) dec.decode(snapshot(t, first.entities, null));
    expect(dec.decode(snapshot(100, first.entities, { tick: 1, entities: first.entities })).kind).toBe('skip');
    expect(dec.decode(snapshot(101, first.entities, { tick: 2, entities: first.entities })).kind).toBe('snapshot');
  });
});

describe('SnapshotDecoder under fuzzing', () => {
  let reads: ReturnType<typeof countByteReads>;
  beforeAll(() => {
    reads = countByteReads();
  });
  afterAll(() => reads.restore());

  /** A match's snapshots, each a delta against a tick the client acked a little earlier (sometimes full). */
  function stream(rand: Random, ticks: number): { bytes: Uint8Array; sent: Sent }[] {
    const out: { bytes: Uint8Array; sent: Sent }[] = [];
    let entities = world(rand, 20);
    for (let tick = 1; tick <= ticks; tick++) {
      entities = step(rand, entities, 1);
      const back = 1 + below(rand, Math.min(out.length, 40));
      const base = out.length === 0 || rand() < 0.05 ? null : out[out.length - back]!.sent;
      const sent = { tick, entities };
      out.push({ bytes: snapshot(tick, entities, base, rand() < 0.8 ? hashEntities(schema, entities) : null), sent });
    }
    return out;
  }

  it('rebuilds every snapshot of a long stream exactly', () => {
    const dec = new SnapshotDecoder(schema, TICK_RATE);
    for (const { bytes, sent } of stream(seededRandom(801), 600)) {
      const d = snapshotOf(dec.decode(bytes));
      must(d.header.tick === sent.tick, `tick ${d.header.tick}`);
      must(d.hashOk !== false && sameEntities(d.entities, sent.entities), `tick ${sent.tick} from ${hex(bytes)}`);
    }
  });

  it('answers random, mutated and truncated snapshots with bad, skip or a bounded snapshot, never a throw', () => {
    const rand = seededRandom(802);
    const valid = stream(rand, 200);
    // A client that holds the stream's first 100 snapshots as baselines (it keeps 64 of them).
    const primed = (): SnapshotDecoder<F> => {
      const dec = new SnapshotDecoder(schema, TICK_RATE);
      for (const v of valid.slice(0, 100)) dec.decode(v.bytes);
      return dec;
    };
    let dec = primed();
    let n = 0;
    const kinds = { snapshot: 0, skip: 0, bad: 0 };
    const decode = (b: Uint8Array): Decoded<F> => {
      // Now and then a fresh client: mutated packets that decode become baselines too.
      if (++n % 2000 === 0) dec = primed();
      reads.reset();
      const d = dec.decode(b);
      must(reads.count <= 2 * b.length + 2, `${reads.count} reads of ${b.length} bytes`);
      kinds[d.kind]++;
      return d;
    };
    const check = (d: Decoded<F>, input: Uint8Array): void => {
      if (d.kind !== 'snapshot') return;
      // No more than the 64 entities the baselines hold plus one per two bytes.
      must(d.entities.size <= 64 + input.length / 2, `${d.entities.size} entities from ${input.length} bytes`);
      for (const e of d.entities.values()) must(schema.fields.every((f) => Number.isFinite(e[f])), 'a field is not finite');
      must(d.hashOk === null || (d.hashOk === (hashEntities(schema, d.entities) === d.header.hash)), 'hashOk');
    };
    const corpus = valid.slice(100).map((v) => v.bytes);
    const tally = fuzz(fuzzInputs(rand, corpus, { random: 4000, mutations: 10000, firstBytes: [PacketType.Snapshot] }), decode, () => false, check);
    expect(tally.ok).toBe(n);
    expect(kinds.bad).toBeGreaterThan(5000);
    expect(kinds.snapshot).toBeGreaterThan(200);
    expect(kinds.skip).toBeGreaterThan(100);
  });
});
