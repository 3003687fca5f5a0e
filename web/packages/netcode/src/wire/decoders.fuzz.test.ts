import { describe, expect, it } from 'vitest';
import { below, fuzz, fuzzInputs, hex, must, randomBytes, seededRandom, sizeOf, type Random } from '@hostrelay/fuzz';
import { boundedReads, isWireError } from '../testing/byte-reads.test-util.js';
import { ByteReader, ByteWriter } from './bytes.js';
import { decodeDelta, deltaBytes } from './delta.js';
import { buttonsCodec, type InputCodec } from './input-codec.js';
import {
  decodeEvent,
  decodeInputPacket,
  encodeEvent,
  encodeInputPacket,
  MAX_INPUTS_PER_PACKET,
  MAX_TICK,
  PacketType,
  readSnapshotHeader,
  writeSnapshotHeader,
  type InputPacket,
  type NetEvent,
  type SnapshotHeader,
} from './packets.js';
import { countSchemaWork } from '../testing/work.test-util.js';
import { MAX_ENTITY_ID, MAX_FIELDS, Schema, type EntityMap } from './schema.js';

// Every game packet comes from another player's tab. A decoder may refuse it
// with WireError and nothing else, must read at most a couple of times per
// byte (so it cannot spin) and must build no more than the bytes describe.

/** Runs a decoder with the read count at zero and checks it stayed within 2 reads a byte. */
const bounded = boundedReads();

const isSafeCount = (v: number): boolean => Number.isSafeInteger(v) && v >= 0;
const u16 = (v: number): boolean => Number.isInteger(v) && v >= 0 && v <= 0xffff;
const u8 = (v: number): boolean => Number.isInteger(v) && v >= 0 && v <= 0xff;

/** Unsigned values across the varint lengths, up to the writer's limit. */
function varintValue(rand: Random): number {
  switch (below(rand, 4)) {
    case 0:
      return below(rand, 128);
    case 1:
      return below(rand, 1 << 21);
    case 2:
      return below(rand, 2 ** 35);
    default:
      return rand() < 0.2 ? Number.MAX_SAFE_INTEGER : below(rand, Number.MAX_SAFE_INTEGER);
  }
}

const small = buttonsCodec(['up', 'down', 'left', 'right', 'fire'] as const);
const wide = buttonsCodec(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'] as const);

function randomInputPacket<I>(rand: Random, codec: InputCodec<I>): InputPacket<I> {
  const kinds = Array.from({ length: 1 + below(rand, 4) }, () => {
    const b = new Uint8Array(codec.size);
    for (let i = 0; i < b.length; i++) b[i] = below(rand, 256);
    return codec.read(b, 0);
  });
  const inputs = Array.from({ length: below(rand, MAX_INPUTS_PER_PACKET + 1) }, () => kinds[rand() < 0.9 ? 0 : below(rand, kinds.length)]!);
  return {
    packetSeq: below(rand, 0x10000),
    ackTick: varintValue(rand),
    sentAt: below(rand, 0x10000),
    viewTick16: varintValue(rand),
    firstSeq: inputs.length > 0 ? Math.max(1, varintValue(rand)) : varintValue(rand),
    inputs,
  };
}

describe('decodeInputPacket under fuzzing', () => {
  for (const [name, codec] of [
    ['one-byte inputs', small],
    ['two-byte inputs', wide],
  ] as const) {
    const c = codec as InputCodec<unknown>;
    const decode = bounded((b) => decodeInputPacket(c, b));
    const check = (p: InputPacket<unknown>): void => {
      must(u16(p.packetSeq) && u16(p.sentAt), 'u16 fields');
      must([p.ackTick, p.viewTick16, p.firstSeq].every(isSafeCount), `varints ${p.ackTick} ${p.viewTick16} ${p.firstSeq}`);
      must(p.inputs.length <= MAX_INPUTS_PER_PACKET, `${p.inputs.length} inputs`);
      must(p.inputs.length === 0 || p.firstSeq >= 1, 'firstSeq 0 with inputs');
      // Whatever was accepted is a packet the encoder can send again.
      must(JSON.stringify(decodeInputPacket(c, encodeInputPacket(c, p))) === JSON.stringify(p), 'changed on a second trip');
    };

    it(`round-trips random packets of ${name} exactly`, () => {
      const rand = seededRandom(301);
      for (let i = 0; i < 1000; i++) {
        const p = randomInputPacket(rand, c);
        const bytes = encodeInputPacket(c, p);
        must(JSON.stringify(decodeInputPacket(c, bytes)) === JSON.stringify(p), `${JSON.stringify(p)} from ${hex(bytes)}`);
      }
    });

    it(`refuses random, mutated and truncated packets of ${name} with WireError only`, () => {
      const rand = seededRandom(302);
      const valid = Array.from({ length: 30 }, () => encodeInputPacket(c, randomInputPacket(rand, c)));
      const tally = fuzz(fuzzInputs(rand, valid, { random: 3000, mutations: 5000, firstBytes: [PacketType.Input] }), decode, isWireError, check);
      expect(tally.ok).toBeGreaterThan(500);
      expect(tally.refused).toBeGreaterThan(3000);
    });
  }
});

function randomHeader(rand: Random): SnapshotHeader {
  const tick = Math.max(1, varintValue(rand) % (MAX_TICK + 1)); // readSnapshotHeader refuses ticks past MAX_TICK
  return {
    packetSeq: below(rand, 0x10000),
    tick,
    baseTick: rand() < 0.3 ? 0 : below(rand, tick),
    ackSeq: varintValue(rand),
    stickyTotal: varintValue(rand),
    echo: rand() < 0.5 ? null : { sentAt: below(rand, 0x10000), holdMs: varintValue(rand) },
    inputSlack: below(rand, 256),
    upLoss255: below(rand, 256),
    hash: rand() < 0.5 ? null : below(rand, 2 ** 32),
  };
}

function headerBytes(h: SnapshotHeader, tail = new Uint8Array(0)): Uint8Array {
  const w = new ByteWriter();
  writeSnapshotHeader(w, h);
  w.bytes(tail);
  return w.finish();
}

describe('readSnapshotHeader under fuzzing', () => {
  const decode = bounded((b) => readSnapshotHeader(new ByteReader(b)));
  const check = (h: SnapshotHeader): void => {
    must(u16(h.packetSeq) && u8(h.inputSlack) && u8(h.upLoss255), 'fixed-size fields');
    must([h.tick, h.baseTick, h.ackSeq, h.stickyTotal].every(isSafeCount), `varints ${JSON.stringify(h)}`);
    must(h.baseTick === 0 || h.baseTick < h.tick, 'baseline after snapshot');
    must(h.echo === null || (u16(h.echo.sentAt) && isSafeCount(h.echo.holdMs)), 'echo');
    must(h.hash === null || (Number.isInteger(h.hash) && h.hash >= 0 && h.hash < 2 ** 32), 'hash');
    must(JSON.stringify(readSnapshotHeader(new ByteReader(headerBytes(h)))) === JSON.stringify(h), 'changed on a second trip');
  };

  it('round-trips random headers exactly, whatever follows them', () => {
    const rand = seededRandom(401);
    for (let i = 0; i < 2000; i++) {
      const h = randomHeader(rand);
      const bytes = headerBytes(h, randomBytes(rand, below(rand, 8)));
      must(JSON.stringify(readSnapshotHeader(new ByteReader(bytes))) === JSON.stringify(h), `${JSON.stringify(h)} from ${hex(bytes)}`);
    }
  });

  it('refuses random, mutated and truncated headers with WireError only', () => {
    const rand = seededRandom(402);
    const valid = Array.from({ length: 40 }, () => headerBytes(randomHeader(rand)));
    const tally = fuzz(fuzzInputs(rand, valid, { random: 5000, mutations: 8000, firstBytes: [PacketType.Snapshot] }), decode, isWireError, check);
    expect(tally.ok).toBeGreaterThan(3000);
    expect(tally.refused).toBeGreaterThan(3000);
  });
});

const ID_CHARS = ['p', '7', '_', '-', 'é', 'あ', '🎮'];
const randomText = (rand: Random, max: number): string =>
  Array.from({ length: below(rand, max + 1) }, () => ID_CHARS[below(rand, ID_CHARS.length)]).join('');

function randomEvent(rand: Random): NetEvent {
  switch (below(rand, 5)) {
    case 0:
      return { type: 'welcome', slot: varintValue(rand), tickRate: varintValue(rand), snapshotRate: varintValue(rand) };
    case 1: {
      // Ids of up to 1024 UTF-8 bytes (4 a character at most), up to 256 players.
      const n = rand() < 0.1 ? 256 : below(rand, 17);
      return { type: 'roster', players: Array.from({ length: n }, () => ({ slot: varintValue(rand), id: randomText(rand, n > 16 ? 4 : 256) })) };
    }
    case 2:
      return { type: 'kicked', reason: randomText(rand, 256) };
    case 3:
      return { type: 'user', payload: randomBytes(rand, rand() < 0.5 ? below(rand, 16) : below(rand, 2048)) };
    default:
      return { type: 'hello' };
  }
}

const utf8 = new TextEncoder();

/** JSON of an event with its payload spelled out, for exact comparison. */
const eventJson = (e: NetEvent): string => JSON.stringify(e.type === 'user' ? { ...e, payload: hex(e.payload) } : e);

describe('decodeEvent under fuzzing', () => {
  const decode = bounded(decodeEvent);
  const check = (e: NetEvent, input: Uint8Array): void => {
    switch (e.type) {
      case 'welcome':
        must([e.slot, e.tickRate, e.snapshotRate].every(isSafeCount), 'welcome varints');
        break;
      case 'roster':
        must(e.players.length <= 256, `${e.players.length} players`);
        must(e.players.every((p) => isSafeCount(p.slot) && p.id.length <= 1024), 'roster entries');
        break;
      case 'kicked':
        must(e.reason.length <= 1024, 'reason length');
        break;
      case 'user':
        must(e.payload.length === input.length - 1, 'payload length');
        break;
      case 'hello':
        break;
    }
    must(sizeOf(e) <= 2 * input.length + 8, `${sizeOf(e)} values from ${input.length} bytes`);
    // A replacement character for each invalid byte can take a string past the 1024 bytes the reader allows.
    const strings = e.type === 'roster' ? e.players.map((p) => p.id) : e.type === 'kicked' ? [e.reason] : [];
    if (strings.every((x) => utf8.encode(x).length <= 1024)) {
      must(eventJson(decodeEvent(encodeEvent(e))) === eventJson(e), 'changed on a second trip');
    }
  };

  it('round-trips random events exactly', () => {
    const rand = seededRandom(501);
    for (let i = 0; i < 2000; i++) {
      const e = randomEvent(rand);
      const bytes = encodeEvent(e);
      must(eventJson(decodeEvent(bytes)) === eventJson(e), `${eventJson(e)} from ${hex(bytes)}`);
    }
  });

  it('refuses random, mutated and truncated events with WireError only', () => {
    const rand = seededRandom(502);
    const types = [PacketType.Welcome, PacketType.Roster, PacketType.Kicked, PacketType.User, PacketType.Hello];
    // Short encodings: every prefix of each is a case too.
    const valid = Array.from({ length: 80 }, () => encodeEvent(randomEvent(rand))).filter((b) => b.length <= 400);
    const tally = fuzz(fuzzInputs(rand, valid, { random: 5000, mutations: 8000, firstBytes: types }), decode, isWireError, check);
    expect(tally.ok).toBeGreaterThan(3000);
    expect(tally.refused).toBeGreaterThan(3000);
  });
});

describe('decodeDelta under fuzzing', () => {
  const schemas = {
    plain: Schema.define({ x: { precision: 1 / 16 }, y: { precision: 1 / 16 }, hp: { interpolate: 'step' } }),
    moving: Schema.define({ x: { precision: 1 / 64, velocity: 'vx' }, vx: { precision: 1 / 16 }, y: { precision: 1 / 64 } }),
    widest: Schema.define(Object.fromEntries(Array.from({ length: MAX_FIELDS }, (_, i) => [`f${i}`, { precision: i % 2 ? 1 : 1 / 8 }]))),
    // Few entities allowed: many of the random worlds and mutations go past the limit.
    capped: Schema.define({ x: { precision: 1 / 64, velocity: 'vx' }, vx: { precision: 1 / 16 }, hp: { interpolate: 'step' } }, { maxEntities: 12 }),
  };

  function world<F extends string>(rand: Random, schema: Schema<F>, n: number): EntityMap<F> {
    const m: EntityMap<F> = new Map();
    for (let i = 0; i < n; i++) {
      const e = schema.blank();
      for (const f of schema.fields) if (rand() < 0.7) e[f] = (rand() - 0.5) * 2000;
      const id = rand() < 0.05 ? MAX_ENTITY_ID - below(rand, 3) : below(rand, 400);
      m.set(id, schema.quantize(e));
    }
    return m;
  }

  for (const [name, schema] of Object.entries(schemas) as [string, Schema<string>][]) {
    it(`rebuilds random worlds exactly (${name} schema)`, () => {
      const rand = seededRandom(601);
      const most = Math.min(30, schema.maxEntities) + 1;
      for (let i = 0; i < 300; i++) {
        const base = rand() < 0.2 ? null : world(rand, schema, below(rand, most));
        const next = world(rand, schema, below(rand, most));
        const dt = base ? below(rand, 10) / 60 : 0;
        const bytes = deltaBytes(schema, base, next, dt);
        const got = decodeDelta(schema, base, new ByteReader(bytes), dt);
        must(got.size === next.size, `${got.size} entities, want ${next.size}`);
        for (const [id, e] of next) must(schema.equal(got.get(id) ?? schema.blank(), e) && got.has(id), `entity ${id} from ${hex(bytes)}`);
      }
    });

    it(`refuses random, mutated and truncated deltas with WireError only (${name} schema)`, () => {
      const rand = seededRandom(602);
      const base = world(rand, schema, Math.min(20, schema.maxEntities));
      // Some past the schema's maxEntities (the capped one allows 12): refused, and their mutations with them.
      const valid = Array.from({ length: 30 }, () => deltaBytes(schema, rand() < 0.5 ? base : null, world(rand, schema, below(rand, rand() < 0.8 ? 12 : 40))));
      // Against the baseline, some ticks later (moving fields then move), or against nothing. Work
      // (schema operations) stays within a few per field of the baseline and of each byte.
      const work = countSchemaWork(schema);
      const decode = bounded((b) => {
        const dt = below(rand, 3) / 30;
        work.count = 0;
        try {
          return decodeDelta(schema, dt > 0 ? base : null, new ByteReader(b), dt);
        } finally {
          must(work.count <= 4 * (schema.size + 1) * (base.size + b.length), `${work.count} operations for ${b.length} bytes: ${hex(b)}`);
        }
      });
      const check = (m: EntityMap<string>, input: Uint8Array): void => {
        must(m.size <= base.size + input.length, `${m.size} entities from ${input.length} bytes`);
        must(m.size <= schema.maxEntities, `${m.size} entities, over maxEntities ${schema.maxEntities}`);
        for (const [id, e] of m) {
          must(Number.isInteger(id) && id >= 0 && id <= MAX_ENTITY_ID, `entity id ${id}`);
          must(schema.fields.every((f) => Number.isFinite(e[f])) && Object.keys(e).length === schema.size, `entity ${id} fields`);
        }
      };
      const tally = fuzz(fuzzInputs(rand, valid, { random: 2000, mutations: 3000 }), decode, isWireError, check);
      expect(tally.ok).toBeGreaterThan(schema === schemas.capped ? 100 : 200);
      expect(tally.refused).toBeGreaterThan(2000);
    });
  }
});
