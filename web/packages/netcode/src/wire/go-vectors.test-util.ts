// The wire vectors the Go netcode package (netcode/ at the repository root)
// is checked against: built here from this implementation, written to
// netcode/testdata/vectors.json by netcode/testdata/generate.ts, and
// compared with that file by go-vectors.test.ts, so a change to either
// side's format fails a test on the other.
import { ByteWriter, WireError } from './bytes.js';
import { encodeDelta } from './delta.js';
import { buttonsCodec } from './input-codec.js';
import { decodeEvent, decodeInputPacket, encodeEvent, encodeInputPacket, writeSnapshotHeader, type NetEvent, type SnapshotHeader } from './packets.js';
import { quantizeAll, Schema, type EntityMap, type FieldSpec } from './schema.js';
import { hashEntities } from './state-hash.js';
import { SnapshotDecoder } from '../client/snapshot-decoder.js';

const TICK_RATE = 60;

/** The arena's field layout (web/games/arena/src/schema.ts), restated so the vectors do not change with the game. */
const arenaSpec = {
  x: { precision: 1 / 16, snapOver: 120, velocity: 'vx' },
  y: { precision: 1 / 16, snapOver: 120, velocity: 'vy' },
  vx: { precision: 1 / 16 },
  vy: { precision: 1 / 16 },
  kind: { interpolate: 'step' },
  team: { interpolate: 'step' },
  scoreL: { interpolate: 'step' },
  scoreR: { interpolate: 'step' },
} as const satisfies Record<string, FieldSpec>;
const cappedSpec = { x: { precision: 0.25 }, hp: {} } as const satisfies Record<string, FieldSpec>;

const schemas = {
  arena: { spec: arenaSpec, maxEntities: 18 },
  capped: { spec: cappedSpec, maxEntities: 4 },
} as const;
type SchemaName = keyof typeof schemas;

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export interface VectorSchema {
  fields: { name: string; precision: number; velocity: string }[];
  maxEntities: number;
  tickRate: number;
}
export interface InputVector {
  name: string;
  size: number;
  packet: { packetSeq: number; ackTick: number; sentAt: number; viewTick16: number; firstSeq: number; inputs: string[] };
  hex: string;
}
export type SnapshotStep =
  | { hex: string; header: SnapshotHeader; entities: [number, number[]][]; hashOk: boolean | null }
  | { hex: string; skip: true }
  | { hex: string; error: string };
export interface SnapshotVector {
  name: string;
  schema: SchemaName;
  steps: SnapshotStep[];
}
export interface EventVector {
  name: string;
  hex: string;
  event: NetEvent | { type: 'user'; payload: string };
}
export interface BadVector {
  name: string;
  kind: 'input' | 'snapshot' | 'event';
  /** Snapshot vectors are decoded against no baseline with this schema. */
  schema?: SchemaName;
  hex: string;
  error: string;
}
export interface Vectors {
  schemas: Record<SchemaName, VectorSchema>;
  inputs: InputVector[];
  snapshots: SnapshotVector[];
  events: EventVector[];
  bad: BadVector[];
}

function schemaOf(name: SchemaName): Schema<string> {
  const { spec, maxEntities } = schemas[name];
  return Schema.define(spec as Record<string, FieldSpec>, { maxEntities });
}

type Ents = Record<number, Record<string, number>>;

/** Encodes snapshots the way NetHost does: header, then the delta against the baseline, with dt from the ticks. */
function snapshots(name: string, schema: SchemaName, frames: Frame[], extra: Uint8Array[] = []): SnapshotVector {
  const s = schemaOf(schema);
  const held = new Map<number, EntityMap<string>>();
  const packets: Uint8Array[] = [];
  for (const [i, f] of frames.entries()) {
    const world = quantizeAll(s, Object.entries(f.entities).map(([id, e]) => [Number(id), e] as const));
    held.set(f.tick, world);
    const w = new ByteWriter();
    writeSnapshotHeader(w, {
      packetSeq: 65534 + i,
      tick: f.tick,
      baseTick: f.base,
      ackSeq: f.ackSeq,
      stickyTotal: i,
      echo: f.echo ?? null,
      inputSlack: 3,
      upLoss255: 7,
      hash: f.hash ? hashEntities(s, world) : null,
    });
    encodeDelta(s, f.base === 0 ? null : held.get(f.base)!, world, w, f.base === 0 ? 0 : (f.tick - f.base) / TICK_RATE);
    packets.push(w.finish());
  }
  const decoder = new SnapshotDecoder(s, TICK_RATE);
  const steps = [...packets, ...extra].map((p): SnapshotStep => {
    const d = decoder.decode(p);
    if (d.kind === 'skip') return { hex: hex(p), skip: true };
    if (d.kind === 'bad') return { hex: hex(p), error: d.error };
    return {
      hex: hex(p),
      header: d.header,
      entities: [...d.entities].map(([id, e]) => [id, s.fields.map((f) => e[f]!)]),
      hashOk: d.hashOk,
    };
  });
  return { name, schema, steps };
}

function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (err instanceof WireError) return err.message;
    throw err;
  }
  throw new Error('the vector decoded without an error');
}

type Frame = { tick: number; base: number; ackSeq: number; hash: boolean; entities: Ents; echo?: { sentAt: number; holdMs: number } };

const player = (x: number, y: number, vx: number, vy: number, team: number) => ({ x, y, vx, vy, kind: 1, team, scoreL: 0, scoreR: 0 });

const ball = (x: number, y: number, vx: number, vy: number) => ({ ...player(x, y, vx, vy, 0), kind: 2 });
const score = (l: number, r: number) => ({ ...player(0, 0, 0, 0, 0), kind: 3, scoreL: l, scoreR: r });
const arenaFrames: Frame[] = [
  { tick: 10, base: 0, ackSeq: 0, hash: true, entities: { 0: player(100.0625, 200, 33.3125, -12.5, 0), 1: player(860, 270, 0, 0, 1), 1000: ball(480, 270, 250.4375, 125.0625), 1001: score(2, 1) } },
  // Steady motion: the ball moved as predicted and is not sent; player 0 turned.
  { tick: 12, base: 10, ackSeq: 3, hash: true, echo: { sentAt: 65000, holdMs: 17 }, entities: { 0: player(101.5, 199.5, -20, 0, 0), 1: player(860, 270, 0, 0, 1), 1000: ball(480 + 250.4375 * (2 / 60), 270 + 125.0625 * (2 / 60), 250.4375, 125.0625), 1001: score(2, 1) } },
  // Player 1 leaves, player 2 arrives, the score changes; a negative coordinate and a jump.
  { tick: 16, base: 12, ackSeq: 9, hash: true, entities: { 0: player(-3.75, 540, 0, 0, 0), 2: player(12, 34, 1, -1, 0), 1000: ball(481, 271, 0, 0), 1001: score(3, 1) } },
  // Against an older baseline (the host has not heard of 16), without a hash.
  { tick: 18, base: 12, ackSeq: 10, hash: false, entities: { 0: player(0, 0, 0, 0, 0), 1000: ball(500, 300, -60, 30) } },
];

export function buildVectors(): Vectors {
  const codec = buttonsCodec(['up', 'down', 'left', 'right', 'kick'] as const);
  const b = (bits: number) => codec.read(Uint8Array.of(bits), 0);
  const inputs: InputVector[] = [
    { name: 'runs of held keys', seq: 65535, ack: 12345, inputs: [9, 9, 9, 9, 9, 9, 0, 0, 9, 16] },
    { name: 'first packet, one input', seq: 0, ack: 0, inputs: [1] },
    { name: 'no inputs', seq: 7, ack: 2 ** 40, inputs: [] },
  ].map((v) => {
    const p = { packetSeq: v.seq, ackTick: v.ack, sentAt: 4321, viewTick16: v.ack * 16 + 8, firstSeq: v.inputs.length ? 900 : 0, inputs: v.inputs.map(b) };
    const bytes = encodeInputPacket(codec, p);
    const back = decodeInputPacket(codec, bytes);
    return {
      name: v.name,
      size: codec.size,
      packet: { ...back, inputs: back.inputs.map((i) => { const o = new Uint8Array(1); codec.write(i, o, 0); return hex(o); }) },
      hex: hex(bytes),
    };
  });

  const arenaName = 'arena: full, deltas with velocity, a removal, an arrival, a replayed and a baseline-less packet';
  const first = snapshots(arenaName, 'arena', arenaFrames);
  // A replayed packet and one whose baseline the client never had are skipped.
  const replay = Uint8Array.from(Buffer.from(first.steps[1]!.hex, 'hex'));
  const orphan = new ByteWriter();
  writeSnapshotHeader(orphan, { packetSeq: 1, tick: 40, baseTick: 39, ackSeq: 0, stickyTotal: 0, echo: null, inputSlack: 0, upLoss255: 0, hash: null });
  orphan.varint(0);
  const arenaFull = snapshots(arenaName, 'arena', arenaFrames, [replay, orphan.finish()]);

  const capped = snapshots('capped schema: at the cap, then a delta that would pass it', 'capped', [
    { tick: 1, base: 0, ackSeq: 0, hash: true, entities: { 0: { x: 1.25, hp: 100 }, 5: { x: -2.5, hp: 3 }, 9: { x: 0, hp: 0 }, 65535: { x: 1e6, hp: -7 } } },
  ], [new ByteWriter().u8(0x82).u16(1).varint(2).varint(1).varint(0).varint(0).u8(0).u8(0).u8(0).varint(1).varint(1).varint(1).finish()]);

  const events: EventVector[] = (
    [
      ['welcome', { type: 'welcome', slot: 3, tickRate: 60, snapshotRate: 30 }],
      ['roster', { type: 'roster', players: [{ slot: 0, id: 'p1' }, { slot: 3, id: 'p_ø' }] }],
      ['kicked with a long reason, cut at a character', { type: 'kicked', reason: 'é'.repeat(600) }],
      ['user', { type: 'user', payload: Uint8Array.of(1, 2, 255) }],
      ['hello', { type: 'hello' }],
    ] as [string, NetEvent][]
  ).map(([name, e]) => {
    const bytes = encodeEvent(e);
    const back = decodeEvent(bytes);
    return { name, hex: hex(bytes), event: back.type === 'user' ? { type: 'user', payload: hex(back.payload) } : back };
  });

  const header = (h: Partial<SnapshotHeader>): ByteWriter => {
    const w = new ByteWriter();
    writeSnapshotHeader(w, { packetSeq: 0, tick: 5, baseTick: 0, ackSeq: 0, stickyTotal: 0, echo: null, inputSlack: 0, upLoss255: 0, hash: null, ...h });
    return w;
  };
  const snap = (name: string, schema: SchemaName, w: ByteWriter | Uint8Array): BadVector => {
    const bytes = w instanceof ByteWriter ? w.finish() : w;
    const d = new SnapshotDecoder(schemaOf(schema), TICK_RATE).decode(bytes);
    if (d.kind !== 'bad') throw new Error(`${name}: decoded as ${d.kind}`);
    return { name, kind: 'snapshot', schema, hex: hex(bytes), error: d.error };
  };
  const fullHex = Uint8Array.from(Buffer.from(arenaFull.steps[0]!.hex, 'hex'));
  const inputBytes = Uint8Array.from(Buffer.from(inputs[0]!.hex, 'hex'));
  const input = (name: string, bytes: Uint8Array): BadVector => ({ name, kind: 'input', hex: hex(bytes), error: errorOf(() => decodeInputPacket(codec, bytes)) });
  const event = (name: string, bytes: Uint8Array): BadVector => ({ name, kind: 'event', hex: hex(bytes), error: errorOf(() => decodeEvent(bytes)) });
  const manyInputs = new ByteWriter().u8(0x81).u16(0).varint(0).u16(0).varint(0).varint(1).varint(2);
  for (let i = 0; i < 2; i++) manyInputs.varint(61).u8(1);
  const bad: BadVector[] = [
    snap('empty', 'arena', new Uint8Array(0)),
    snap('truncated full snapshot', 'arena', fullHex.subarray(0, fullHex.length - 3)),
    snap('tick past 2^40', 'arena', header({ tick: 2 ** 40 + 1 }).varint(0)),
    snap('baseline after the snapshot', 'arena', header({ tick: 5, baseTick: 5 }).varint(0)),
    snap('varint longer than 8 bytes', 'arena', new ByteWriter().u8(0x82).u16(0).bytes(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01))),
    snap('varint past 2^53', 'arena', new ByteWriter().u8(0x82).u16(0).bytes(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10))),
    snap('more entities than bytes', 'arena', header({}).varint(1000).u8(0)),
    snap('past 2 × maxEntities', 'capped', header({}).varint(9).bytes(new Uint8Array(18))),
    snap('a field mask past the schema', 'capped', header({}).varint(1).varint(0).varint(2 * 4 + 1).u8(0)),
    snap('an even header', 'arena', header({}).varint(1).varint(0).varint(2).u8(0)),
    snap('an entity id past 65535', 'arena', header({}).varint(1).varint(65536).varint(1).u8(0)),
    snap('a delta cut inside a field', 'arena', header({}).varint(1).varint(0).varint(3).u8(0x80)),
    snap('more entities than the cap', 'capped', header({}).varint(5).bytes(Uint8Array.of(0, 1, 0, 1, 0, 1, 0, 1, 0, 1))),
    input('truncated', inputBytes.subarray(0, inputBytes.length - 1)),
    input('not an input packet', Uint8Array.of(0x82, 0, 0)),
    input('a run of zero', new ByteWriter().u8(0x81).u16(0).varint(0).u16(0).varint(0).varint(1).varint(1).varint(0).u8(1).finish()),
    input('121 inputs', manyInputs.finish()),
    input('inputs before sequence 1', new ByteWriter().u8(0x81).u16(0).varint(0).u16(0).varint(0).varint(0).varint(1).varint(1).u8(1).finish()),
    event('empty', new Uint8Array(0)),
    event('unknown type', Uint8Array.of(0x99)),
    event('roster of 257', new ByteWriter().u8(0x92).varint(257).finish()),
    event('string past 1024 bytes', new ByteWriter().u8(0x93).varint(1025).bytes(new Uint8Array(1025)).finish()),
    event('truncated welcome', Uint8Array.of(0x91, 3, 60)),
  ];

  const out: Record<string, VectorSchema> = {};
  for (const name of Object.keys(schemas) as SchemaName[]) {
    const s = schemaOf(name);
    const spec = schemas[name].spec as Record<string, FieldSpec>;
    out[name] = {
      fields: s.fields.map((f) => ({ name: f, precision: spec[f]!.precision ?? 1, velocity: spec[f]!.velocity ?? '' })),
      maxEntities: s.maxEntities,
      tickRate: TICK_RATE,
    };
  }
  return { schemas: out as Record<SchemaName, VectorSchema>, inputs, snapshots: [arenaFull, capped], events, bad };
}
