// Seeded fuzzing for the decoders of untrusted bytes. A case is random
// bytes, a mutated valid encoding or a truncated one; a failure names the
// input in hex so it can be pasted into a fixed-vector test.

/** A number in [0, 1) from a seeded generator. */
export type Random = () => number;

/**
 * mulberry32, the generator of @hostrelay/netcode's seededRandom: the same
 * seed gives the same cases in either package's tests. A copy, so that the
 * protocol package's tests do not depend on the netcode package.
 */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** An input for a failure message: whole when short, else its start and length (the seed replays it). */
const shown = (b: Uint8Array): string => (b.length <= 256 ? hex(b) : `${hex(b.subarray(0, 256))}… (${b.length} bytes)`);

/** A plain assertion: thousands of cases a test, so cheaper than expect(). */
export function must(condition: boolean, why: string): asserts condition {
  if (!condition) throw new Error(why);
}

/** An integer in [0, n). */
export const below = (rand: Random, n: number): number => Math.floor(rand() * n);

export function randomBytes(rand: Random, length: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = below(rand, 256);
  return out;
}

/** Bytes a parser treats specially: varint continuations, msgpack length prefixes, limits. */
const INTERESTING = [0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0xc0, 0xc1, 0xc4, 0xc6, 0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf];
/** Length fields claiming far more than any packet holds: u32 max, and LEB128 varints of 2^32−1 and 2^56−1. */
const HUGE = [
  [0xff, 0xff, 0xff, 0xff],
  [0xff, 0xff, 0xff, 0xff, 0x0f],
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
  [0xdd, 0xff, 0xff, 0xff, 0xff],
  [0xdf, 0xff, 0xff, 0xff, 0xff],
  [0xdb, 0xff, 0xff, 0xff, 0xff],
];

/** One to four stacked edits of `src`: bit flips, truncation, insertion, deletion, huge length fields. */
export function mutate(rand: Random, src: Uint8Array): Uint8Array<ArrayBuffer> {
  let b: number[] = Array.from(src);
  const edits = 1 + below(rand, 4);
  for (let e = 0; e < edits; e++) {
    const at = below(rand, b.length + 1);
    switch (below(rand, 9)) {
      case 0: // flip one bit
        if (b.length > 0) b[at % b.length]! ^= 1 << below(rand, 8);
        break;
      case 1: // truncate
        b = b.slice(0, at);
        break;
      case 2: // insert a byte
        b.splice(at, 0, below(rand, 256));
        break;
      case 3: // delete a run of bytes
        b.splice(at, 1 + below(rand, 4));
        break;
      case 4: // overwrite with a byte parsers care about
        if (b.length > 0) b[at % b.length] = INTERESTING[below(rand, INTERESTING.length)]!;
        break;
      case 5: {
        // overwrite with a huge length field
        const huge = HUGE[below(rand, HUGE.length)]!;
        b.splice(at, huge.length, ...huge);
        break;
      }
      case 6: // insert a huge length field
        b.splice(at, 0, ...HUGE[below(rand, HUGE.length)]!);
        break;
      case 7: {
        // repeat a slice
        const from = below(rand, b.length + 1);
        b.splice(at, 0, ...b.slice(from, from + 1 + below(rand, 16)));
        break;
      }
      default: // overwrite a byte at random
        if (b.length > 0) b[at % b.length] = below(rand, 256);
    }
  }
  return Uint8Array.from(b);
}

export interface FuzzPlan {
  /** Random byte strings, lengths 0..maxLength (half of them under 64). */
  random: number;
  /** Mutations of the valid encodings, drawn in turn. */
  mutations: number;
  maxLength?: number;
  /** Half the random strings start with one of these (type bytes), to get past the first check. */
  firstBytes?: readonly number[];
}

/**
 * The inputs of one fuzz run: random strings, mutated valid encodings, then
 * every strict prefix of every valid encoding.
 */
export function* fuzzInputs(rand: Random, valid: readonly Uint8Array[], plan: FuzzPlan): Generator<Uint8Array<ArrayBuffer>> {
  const maxLength = plan.maxLength ?? 2048;
  for (let i = 0; i < plan.random; i++) {
    const length = rand() < 0.5 ? below(rand, 64) : below(rand, maxLength + 1);
    const b = randomBytes(rand, length);
    if (plan.firstBytes && length > 0 && rand() < 0.5) b[0] = plan.firstBytes[below(rand, plan.firstBytes.length)]!;
    yield b;
  }
  if (valid.length > 0) {
    for (let i = 0; i < plan.mutations; i++) yield mutate(rand, valid[i % valid.length]!);
  }
  for (const v of valid) {
    for (let n = 0; n < v.length; n++) yield Uint8Array.from(v.subarray(0, n));
  }
}

/** How a decoder fared over a run; both counts should be well above zero for a run to mean much. */
export interface FuzzTally {
  ok: number;
  refused: number;
}

/**
 * Runs `decode` on every input. An error `isOwnError` accepts counts as a
 * refusal; anything else (a RangeError or TypeError from the runtime, say)
 * fails the test with the input that caused it. `check` sees every value
 * decoded, with its input.
 */
export function fuzz<T>(
  inputs: Iterable<Uint8Array<ArrayBuffer>>,
  decode: (input: Uint8Array<ArrayBuffer>) => T,
  isOwnError: (err: unknown) => boolean,
  check: (value: T, input: Uint8Array<ArrayBuffer>) => void = () => undefined,
): FuzzTally {
  const tally: FuzzTally = { ok: 0, refused: 0 };
  for (const input of inputs) {
    let value: T;
    try {
      value = decode(input);
    } catch (err) {
      if (isOwnError(err)) {
        tally.refused++;
        continue;
      }
      throw new Error(`decoder leaked ${String(err)} on input ${shown(input)}`, { cause: err });
    }
    try {
      check(value, input);
    } catch (err) {
      throw new Error(`bad value from input ${shown(input)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    tally.ok++;
  }
  return tally;
}

/**
 * Values, array items, map entries and string characters in a decoded
 * value: a bound on it in terms of the input's length shows a decoder does
 * not build more than the bytes describe.
 */
export function sizeOf(value: unknown): number {
  if (typeof value === 'string') return 1 + value.length;
  if (value instanceof Uint8Array) return 1 + value.length;
  if (value instanceof Map) {
    let n = 1;
    for (const [k, v] of value) n += sizeOf(k) + sizeOf(v);
    return n;
  }
  if (Array.isArray(value)) return value.reduce((n: number, v: unknown) => n + sizeOf(v), 1);
  if (typeof value === 'object' && value !== null) {
    return Object.values(value).reduce((n: number, v: unknown) => n + sizeOf(v), 1);
  }
  return 1;
}
