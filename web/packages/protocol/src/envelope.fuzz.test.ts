import { encode } from '@msgpack/msgpack';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { below, fuzz, fuzzInputs, hex, must, randomBytes, seededRandom, sizeOf, type Random } from '@hostrelay/fuzz';
import { checkMsgpack } from './check.js';
import { decodeFrame, encodeFrame } from './envelope.js';
import { ProtocolError } from './errors.js';
import { kindOf } from './errors.test-util.js';
import { MAX_DEPTH } from './limits.js';
import type { Frame, MessageMap, MessageTypeName } from './messages.js';
import { bodies } from './schemas.js';

// Lobby frames come from the server, which a proxy or a bug can make say
// anything: decodeFrame must refuse with a ProtocolError, never a runtime
// error, and build no more than the bytes describe.

const TYPES = Object.keys(bodies) as MessageTypeName[];
const isProtocolError = (err: unknown): boolean => err instanceof ProtocolError;

const golden = (
  JSON.parse(readFileSync(new URL('../../../../protocol/testdata/golden.json', import.meta.url), 'utf8')) as { hex: string }[]
).map((v) => new Uint8Array(Buffer.from(v.hex, 'hex')));

// The zero value of each list's item, by field name.
const ITEMS: Record<string, unknown> = {
  players: bodies.roomJoined.fromWire({ players: [null] }, 'x').players[0],
  rooms: bodies.roomList.fromWire({ rooms: [null] }, 'x').rooms[0],
  set: bodies.roomList.fromWire({ rooms: [null] }, 'x').rooms[0],
  servers: bodies.iceRefresh.fromWire({ ice: { servers: [null] } }, 'x').ice.servers[0],
  members: bodies.partyUpdated.fromWire({ party: { members: [null] } }, 'x').party.members[0],
  urls: '',
  del: '',
};

const INTS = [0, 1, -1, 127, 128, -33, 255, 256, 65535, 65536, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
const CHARS = ['a', 'Z', '0', ' ', '"', '\\', 'é', 'ß', 'あ', '🎮', '\u0000', '\u{10ffff}'];

function randomString(rand: Random, max: number): string {
  let s = '';
  for (let n = below(rand, max + 1); n > 0; n--) s += CHARS[below(rand, CHARS.length)];
  return s;
}

/** A random value shaped like `zero`, a decoded body or part of one. */
function randomLike(rand: Random, zero: unknown, key = ''): unknown {
  if (typeof zero === 'string') return rand() < 0.3 ? '' : randomString(rand, 40);
  if (typeof zero === 'number') return rand() < 0.3 ? 0 : rand() < 0.5 ? INTS[below(rand, INTS.length)] : below(rand, 1e6) - 5e5;
  if (typeof zero === 'boolean') return rand() < 0.5;
  if (zero instanceof Uint8Array) return Uint8Array.from({ length: rand() < 0.3 ? 0 : below(rand, 64) }, () => below(rand, 256));
  if (Array.isArray(zero)) return Array.from({ length: below(rand, 4) }, () => randomLike(rand, ITEMS[key]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(zero as object)) out[k] = randomLike(rand, v, k);
  return out;
}

function randomFrame(rand: Random): Frame {
  const t = TYPES[below(rand, TYPES.length)]!;
  const id = rand() < 0.3 ? 0 : rand() < 0.5 ? 0xffff_ffff : below(rand, 1e5);
  if (rand() < 0.15) return { t, id } as Frame;
  return { t, id, b: randomLike(rand, bodies[t].zero()) } as Frame;
}

const encodeOf = (f: Frame): Uint8Array => encodeFrame(f.t, f.id, f.b as Partial<MessageMap[MessageTypeName]> | undefined);

/** Hostile msgpack that is well-formed: envelope-shaped maps with wrong types, odd keys and deep nesting. */
function randomMsgpackValue(rand: Random, depth: number): unknown {
  const pick = below(rand, depth > 0 ? 12 : 9);
  switch (pick) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return INTS[below(rand, INTS.length)];
    case 3:
      return rand() * 1e6;
    case 4:
      return randomString(rand, 12);
    case 5:
      return randomBytes(rand, below(rand, 8));
    case 6:
      return TYPES[below(rand, TYPES.length)];
    case 7:
      return 2 ** 64 - 1; // a uint64 past safe integers
    case 8:
      return -(2 ** 63);
    case 9:
      return Array.from({ length: below(rand, 4) }, () => randomMsgpackValue(rand, depth - 1));
    default: {
      const keys = ['t', 'id', 'b', 'players', 'room', 'rooms', 'ice', 'servers', 'urls', 'v', 'name', 'url', 'region', 'node', '0', 'constructor', 'toString'];
      const out: Record<string, unknown> = {};
      for (let n = below(rand, 5); n > 0; n--) out[keys[below(rand, keys.length)]!] = randomMsgpackValue(rand, depth - 1);
      return out;
    }
  }
}

function randomEnvelope(rand: Random): Uint8Array {
  const env: Record<string, unknown> = {};
  if (rand() < 0.9) env['t'] = rand() < 0.8 ? TYPES[below(rand, TYPES.length)] : randomMsgpackValue(rand, 1);
  if (rand() < 0.6) env['id'] = rand() < 0.7 ? below(rand, 1000) : randomMsgpackValue(rand, 1);
  if (rand() < 0.8) env['b'] = randomMsgpackValue(rand, below(rand, MAX_DEPTH + 3));
  return encode(env);
}

/** Strings as a placeholder: see checkFrame. */
const shapeOf = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' ? 's' : x));

/**
 * A decoded frame must be one the encoder accepts and that decodes to the
 * same frame again. Strings are compared by shape only: the msgpack
 * library's UTF-8 decoder takes invalid bytes (lone surrogates, overlong
 * forms), so a mutated string need not survive a second trip byte for byte.
 */
function checkFrame(frame: Frame, input: Uint8Array): void {
  must(TYPES.includes(frame.t), `type ${frame.t}`);
  must(Number.isInteger(frame.id) && frame.id >= 0 && frame.id <= 0xffff_ffff, `id ${frame.id}`);
  // Go's zero-filled bodies can outgrow the bytes a little; never by more than a constant a byte.
  must(sizeOf(frame) <= 16 * input.length + 64, `${sizeOf(frame)} values from ${input.length} bytes`);
  must(shapeOf(decodeFrame(encodeOf(frame))) === shapeOf(frame), 'changed on a second trip');
}

describe('decodeFrame under fuzzing', () => {
  it('round-trips random frames of every type exactly', () => {
    const rand = seededRandom(101);
    for (let i = 0; i < 2000; i++) {
      const frame = randomFrame(rand);
      const bytes = encodeOf(frame);
      const back = decodeFrame(bytes);
      must(JSON.stringify(back) === JSON.stringify(frame), `${JSON.stringify(frame)} came back as ${JSON.stringify(back)}`);
      must(hex(encodeOf(back)) === hex(bytes), `${hex(bytes)} re-encoded differently`);
    }
  });

  it('refuses random bytes (0..2 KB) with ProtocolError only', () => {
    const rand = seededRandom(102);
    const tally = fuzz(fuzzInputs(rand, [], { random: 5000, mutations: 0, firstBytes: [0x81, 0x82, 0x83, 0xde, 0xdf] }), decodeFrame, isProtocolError, checkFrame);
    expect(tally.refused).toBeGreaterThan(4500);
  });

  it('survives mutated and truncated valid frames', () => {
    const rand = seededRandom(103);
    const valid = [...golden, ...Array.from({ length: 40 }, () => encodeOf(randomFrame(rand)))];
    const tally = fuzz(fuzzInputs(rand, valid, { random: 0, mutations: 8000 }), decodeFrame, isProtocolError, checkFrame);
    // The run reaches past the envelope: plenty decode, plenty are refused.
    expect(tally.ok).toBeGreaterThan(500);
    expect(tally.refused).toBeGreaterThan(5000);
  });

  it('refuses well-formed msgpack of the wrong shape with ProtocolError only', () => {
    const rand = seededRandom(104);
    const inputs = Array.from({ length: 4000 }, () => new Uint8Array(randomEnvelope(rand)));
    const tally = fuzz(inputs, decodeFrame, isProtocolError, checkFrame);
    expect(tally.ok).toBeGreaterThan(100);
    expect(tally.refused).toBeGreaterThan(100);
  });
});


describe('checkMsgpack under fuzzing', () => {
  const isCheckError = (err: unknown): boolean => err instanceof ProtocolError && (err.kind === 'malformed' || err.kind === 'too_deep');

  it('accepts one whole value, and refuses every strict prefix and any trailing byte', () => {
    const rand = seededRandom(201);
    for (let i = 0; i < 1500; i++) {
      const bytes = encode(randomMsgpackValue(rand, below(rand, MAX_DEPTH)));
      checkMsgpack(bytes, MAX_DEPTH);
      for (let cut = 0; cut < bytes.length; cut++) {
        must(kindOf(() => checkMsgpack(bytes.subarray(0, cut), MAX_DEPTH)) === 'malformed', `prefix ${cut} of ${hex(bytes)}`);
      }
      const longer = new Uint8Array(bytes.length + 1);
      longer.set(bytes);
      must(kindOf(() => checkMsgpack(longer, MAX_DEPTH)) === 'malformed', `${hex(bytes)} plus a byte`);
    }
  });

  it('refuses random and mutated bytes at any depth limit with malformed or too_deep only', () => {
    const rand = seededRandom(202);
    const valid = Array.from({ length: 30 }, () => encode(randomMsgpackValue(rand, 4)));
    let depth = 0;
    const tally = fuzz(
      fuzzInputs(rand, valid, { random: 6000, mutations: 6000 }),
      (b) => checkMsgpack(b, (depth = (depth + 1) % (MAX_DEPTH + 3))),
      isCheckError,
    );
    expect(tally.ok).toBeGreaterThan(500);
    expect(tally.refused).toBeGreaterThan(500);
  });
});
