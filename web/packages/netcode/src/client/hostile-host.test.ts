import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter, WireError } from '../wire/bytes.js';
import { decodeDelta, deltaBytes } from '../wire/delta.js';
import { DEFAULT_MAX_ENTITIES, MAX_ENTITY_ID, quantizeAll, Schema, type EntityMap, type ReadonlyEntityMap } from '../wire/schema.js';
import { setupMatch } from '../testing/match.test-util.js';
import { snapshotPacket, type SentSnapshot } from '../testing/snapshot.test-util.js';
import { moverGame } from '../testing/movers.test-util.js';
import { countSchemaWork } from '../testing/work.test-util.js';
import { SnapshotDecoder } from './snapshot-decoder.js';

// The host is another player's tab. The figures: 65,536 entities in
// a 196 KB snapshot were accepted, then every 11-byte delta took 50 ms and
// the heap reached 160 MB. A schema caps entities per snapshot; past the cap
// a snapshot is dropped and counted, and the work a packet can cost is
// bounded by its bytes and the cap, counted here in operations, not time.

const TICK_RATE = 60;
const fields = {
  x: { precision: 1 / 64, velocity: 'vx' },
  vx: { precision: 1 / 16 },
  y: { precision: 1 / 64 },
  kind: { interpolate: 'step' },
} as const;

function entities<F extends string>(schema: Schema<F>, n: number, firstId = 0): EntityMap<F> {
  const m: EntityMap<F> = new Map();
  for (let i = 0; i < n; i++) {
    const e = schema.blank();
    e[schema.fields[0]!] = i;
    e[schema.fields[1]!] = 1 + (i % 7);
    m.set(firstId + i, schema.quantize(e));
  }
  return m;
}

function packet<F extends string>(
  schema: Schema<F>,
  tick: number,
  next: ReadonlyEntityMap<F>,
  base: SentSnapshot<F> | null,
): Uint8Array {
  return snapshotPacket(schema, TICK_RATE, tick, next, base);
}

describe('entities per snapshot', () => {
  it('defaults to 256 and takes 1–65,536 from the schema', () => {
    expect(DEFAULT_MAX_ENTITIES).toBe(256);
    expect(Schema.define(fields).maxEntities).toBe(256);
    expect(Schema.define(fields, { maxEntities: 65536 }).maxEntities).toBe(MAX_ENTITY_ID + 1);
    for (const bad of [0, -1, 1.5, 65537, NaN]) {
      expect(() => Schema.define(fields, { maxEntities: bad }), String(bad)).toThrow(/maxEntities must be 1–65536/);
    }
  });

  it('decodes a full snapshot at the limit and refuses one past it with a clear error', () => {
    const schema = Schema.define(fields, { maxEntities: 8 });
    const at = decodeDelta(schema, null, new ByteReader(deltaBytes(schema, null, entities(schema, 8))));
    expect(at.size).toBe(8);
    expect(() => decodeDelta(schema, null, new ByteReader(deltaBytes(schema, null, entities(schema, 9))))).toThrow(
      new WireError("netcode: a snapshot of more than 8 entities (the schema's maxEntities)"),
    );
    // The default limit, at and past it.
    const byDefault = Schema.define(fields);
    expect(decodeDelta(byDefault, null, new ByteReader(deltaBytes(byDefault, null, entities(byDefault, 256)))).size).toBe(256);
    expect(() => decodeDelta(byDefault, null, new ByteReader(deltaBytes(byDefault, null, entities(byDefault, 257))))).toThrow(/more than 256/);
  });

  it('counts a delta against its baseline: one more entity is refused, a full swap at the limit is not', () => {
    const schema = Schema.define(fields, { maxEntities: 8 });
    const base = entities(schema, 8);
    const grown = new Map(base).set(100, entities(schema, 1).get(0)!);
    expect(() => decodeDelta(schema, base, new ByteReader(deltaBytes(schema, base, grown, 1 / 60)), 1 / 60)).toThrow(/more than 8/);
    // Every entity goes and eight new ones come: 16 entries, 8 entities.
    const swapped = entities(schema, 8, 1000);
    const got = decodeDelta(schema, base, new ByteReader(deltaBytes(schema, base, swapped, 1 / 60)), 1 / 60);
    expect([...got.keys()]).toEqual([...swapped.keys()]);
  });

  it('refuses a count the bytes cannot hold before doing any work', () => {
    const schema = Schema.define(fields, { maxEntities: 65536 });
    const work = countSchemaWork(schema);
    const w = new ByteWriter().varint(65536).u8(0).u8(1); // 65,536 entities claimed, 1 described
    expect(() => decodeDelta(schema, null, new ByteReader(w.finish()))).toThrow(/65536 entities in 2 bytes/);
    expect(work.count).toBe(0);
  });

  it('the host refuses to send more than the schema allows', () => {
    const schema = Schema.define(fields, { maxEntities: 8 });
    expect(quantizeAll(schema, entities(schema, 8)).size).toBe(8);
    expect(() => quantizeAll(schema, entities(schema, 9))).toThrow(/more than 8 entities; raise maxEntities/);
  });
});

describe('a hostile host', () => {
  it('cannot make a snapshot of 65,536 entities stick: dropped with its reason after work bounded by the limit', () => {
    const wide = Schema.define(fields, { maxEntities: 65536 }); // the hostile host's own schema
    const schema = Schema.define(fields);
    const all = entities(wide, 65536);
    const bytes = packet(wide, 1, all, null);
    expect(bytes.length).toBeGreaterThan(196_000);
    const decoder = new SnapshotDecoder(schema, TICK_RATE);
    const work = countSchemaWork(schema);
    expect(decoder.decode(bytes)).toEqual({ kind: 'bad', error: "netcode: a snapshot of more than 256 entities (the schema's maxEntities)" });
    // Refused at entity 257: a few operations per field of those, not of 65,536.
    expect(work.count).toBeLessThanOrEqual(2 * (DEFAULT_MAX_ENTITIES + 1) * (schema.size + 1));
  });

  it('at the limit, each small delta costs work bounded by its bytes and the limit, never more', () => {
    const schema = Schema.define(fields); // moving fields: the costliest case, every entity moves on every delta
    const decoder = new SnapshotDecoder(schema, TICK_RATE);
    let sent = { tick: 1, entities: entities(schema, DEFAULT_MAX_ENTITIES) as ReadonlyEntityMap<'x' | 'vx' | 'y' | 'kind'> };
    expect(decoder.decode(packet(schema, 1, sent.entities, null)).kind).toBe('snapshot');
    const work = countSchemaWork(schema);
    let maxPerPacket = 0;
    let maxBytes = 0;
    for (let tick = 2; tick < 202; tick++) {
      // One entity turns; the rest glide as predicted (nothing on the wire for them).
      const next: EntityMap<'x' | 'vx' | 'y' | 'kind'> = new Map();
      for (const [id, e] of sent.entities) next.set(id, schema.quantize({ ...e, x: e.x + e.vx / TICK_RATE }));
      const id = tick % DEFAULT_MAX_ENTITIES;
      next.set(id, schema.quantize({ ...next.get(id)!, y: tick }));
      const bytes = packet(schema, tick, next, sent);
      maxBytes = Math.max(maxBytes, bytes.length);
      work.count = 0;
      const d = decoder.decode(bytes);
      expect(d.kind === 'snapshot' && d.hashOk).toBe(true);
      maxPerPacket = Math.max(maxPerPacket, work.count);
      sent = { tick, entities: next };
    }
    expect(maxBytes).toBeLessThan(24);
    // Per entity of the baseline: a copy, a prediction and a rounding per field, an equality check,
    // and the hash's rounding per field; the constant does not grow with the number of packets.
    const perEntity = 1 + 3 * schema.size + 1 + schema.size;
    expect(maxPerPacket).toBeLessThanOrEqual(DEFAULT_MAX_ENTITIES * perEntity + 8 * maxBytes);
  });

  it('a running client drops such a snapshot, counts it, says why, and plays on', () => {
    const m = setupMatch({ clients: [{}] });
    m.run(300);
    const c = m.clients[0]!.client;
    const before = c.stats();
    expect(before.badPackets).toBe(0);
    const schema = moverGame.schema;
    m.net.deliver(m.net.hostId, 'c1', packet(schema, 1_000_000, entities(schema, 65536), null), 'game');
    m.run(300);
    const after = c.stats();
    expect(after.badPackets).toBe(1);
    expect(after.lastBadPacket).toBe("netcode: a snapshot of more than 256 entities (the schema's maxEntities)");
    expect(after.snapshotRate).toBeGreaterThan(0);
    expect(c.view().local).not.toBeNull();
  });
});
