import { describe, expect, it } from 'vitest';
import { below, fuzz, fuzzInputs, hex, must, seededRandom, type Random } from '@hostrelay/fuzz';
import { boundedReads, isWireError } from '../testing/byte-reads.test-util.js';
import { WireError } from './bytes.js';
import { buttonsCodec, type InputCodec } from './input-codec.js';
import {
  decodeLockstepEvent,
  decodeLockstepFrames,
  decodeLockstepInputs,
  encodeLockstepEvent,
  encodeLockstepFrames,
  encodeLockstepInputs,
  encodeStateChunks,
  LockstepPacketType,
  MAX_FRAME,
  MAX_FRAMES_PER_PACKET,
  MAX_LOCKSTEP_PLAYERS,
  MAX_LOCKSTEP_WINDOW,
  MAX_STATE_BYTES,
  STATE_CHUNK_BYTES,
  StateAssembler,
  type LockstepEvent,
  type LockstepFrames,
  type LockstepInputs,
} from './lockstep-packets.js';

// The deterministic modes' packets come from other players' tabs like every
// other: refused with WireError only, read in bounded work, and nothing
// built past the counts and frame numbers the format allows.

/** Runs a decoder with the read count at zero and checks it stayed within 2 reads a byte. */
const bounded = boundedReads();

const frameOk = (f: number): boolean => Number.isSafeInteger(f) && f >= 0 && f <= MAX_FRAME;
const codec = buttonsCodec(['up', 'down', 'left', 'right', 'kick'] as const) as InputCodec<unknown>;

function randomInput(rand: Random): unknown {
  return codec.read(Uint8Array.of(below(rand, 256)), 0);
}
function randomFrame(rand: Random): number {
  return rand() < 0.5 ? 1 + below(rand, 100_000) : 1 + below(rand, MAX_FRAME - MAX_FRAMES_PER_PACKET);
}

function randomInputs(rand: Random): LockstepInputs<unknown> {
  const held = [randomInput(rand), randomInput(rand)];
  const inputs = Array.from({ length: below(rand, MAX_FRAMES_PER_PACKET + 1) }, () => held[rand() < 0.9 ? 0 : 1]);
  const hashes = Array.from({ length: below(rand, MAX_FRAMES_PER_PACKET + 1) }, () => below(rand, 2 ** 32));
  const p = { ackFrame: below(rand, MAX_FRAME + 1), firstFrame: inputs.length ? randomFrame(rand) : 0, inputs, hashFrame: hashes.length ? randomFrame(rand) : 0, hashes };
  // Newer peers add the resync epoch; older ones end the packet before it.
  return rand() < 0.7 ? { ...p, epoch: below(rand, 1000) } : p;
}

function randomFrames(rand: Random, players: number): LockstepFrames<unknown> {
  const n = below(rand, MAX_FRAMES_PER_PACKET + 1);
  const rows = Array.from({ length: n }, () => Array.from({ length: players }, () => randomInput(rand)));
  // Held keys: most rows repeat the one before.
  for (let i = 1; i < n; i++) if (rand() < 0.8) rows[i] = [...rows[i - 1]!];
  const p = { hostFrame: below(rand, MAX_FRAME + 1), ackInput: below(rand, MAX_FRAME + 1), ackHash: below(rand, MAX_FRAME + 1), firstFrame: n ? randomFrame(rand) : 0, rows };
  if (rand() < 0.3) return p; // an older host: no seats
  // Seats change rarely: a mask or two per packet.
  const a = below(rand, 1 << players);
  const b = below(rand, 1 << players);
  const at = below(rand, n + 1);
  return { ...p, roster: Array.from({ length: n }, (_, i) => (i < at ? a : b)) };
}

describe('decodeLockstepInputs under fuzzing', () => {
  const decode = bounded((b) => decodeLockstepInputs(codec, b));
  const check = (p: LockstepInputs<unknown>): void => {
    must([p.ackFrame, p.firstFrame, p.hashFrame].every(frameOk), 'frames in range');
    must(p.inputs.length <= MAX_FRAMES_PER_PACKET && p.hashes.length <= MAX_FRAMES_PER_PACKET, 'counts');
    must(p.inputs.length === 0 || (p.firstFrame >= 1 && p.firstFrame + p.inputs.length - 1 <= MAX_FRAME), 'input frames');
    must(p.hashes.every((h) => Number.isInteger(h) && h >= 0 && h < 2 ** 32), 'hashes');
    must(p.epoch === undefined || frameOk(p.epoch), 'epoch');
    must(JSON.stringify(decodeLockstepInputs(codec, encodeLockstepInputs(codec, p))) === JSON.stringify(p), 'changed on a second trip');
  };
  it('round-trips random packets exactly', () => {
    const rand = seededRandom(1401);
    for (let i = 0; i < 1000; i++) {
      const p = randomInputs(rand);
      const bytes = encodeLockstepInputs(codec, p);
      must(JSON.stringify(decodeLockstepInputs(codec, bytes)) === JSON.stringify(p), `${JSON.stringify(p)} from ${hex(bytes)}`);
    }
  });
  it('refuses random, mutated and truncated packets with WireError only', () => {
    const rand = seededRandom(1402);
    const valid = Array.from({ length: 30 }, () => encodeLockstepInputs(codec, randomInputs(rand)));
    const tally = fuzz(fuzzInputs(rand, valid, { random: 3000, mutations: 6000, firstBytes: [LockstepPacketType.Inputs] }), decode, isWireError, check);
    expect(tally.ok).toBeGreaterThan(300);
    expect(tally.refused).toBeGreaterThan(3000);
  });
  it('refuses a frame number past MAX_FRAME and counts past the limit', () => {
    const at = encodeLockstepInputs(codec, { ackFrame: MAX_FRAME, firstFrame: MAX_FRAME, inputs: [codec.neutral], hashFrame: 0, hashes: [] });
    expect(decodeLockstepInputs(codec, at).firstFrame).toBe(MAX_FRAME);
    expect(() => decodeLockstepInputs(codec, encodeLockstepInputs(codec, { ackFrame: MAX_FRAME + 1, firstFrame: 0, inputs: [], hashFrame: 0, hashes: [] }))).toThrow(WireError);
    expect(() => decodeLockstepInputs(codec, encodeLockstepInputs(codec, { ackFrame: 0, firstFrame: MAX_FRAME, inputs: [codec.neutral, codec.neutral], hashFrame: 0, hashes: [] }))).toThrow(WireError);
    const full = { ackFrame: 0, firstFrame: 1, inputs: Array(MAX_FRAMES_PER_PACKET).fill(codec.neutral), hashFrame: 1, hashes: Array(MAX_FRAMES_PER_PACKET).fill(7) };
    expect(decodeLockstepInputs(codec, encodeLockstepInputs(codec, full)).hashes).toHaveLength(MAX_FRAMES_PER_PACKET);
    expect(() => decodeLockstepInputs(codec, encodeLockstepInputs(codec, { ...full, inputs: [...full.inputs, codec.neutral] }))).toThrow(WireError);
    expect(() => decodeLockstepInputs(codec, encodeLockstepInputs(codec, { ...full, hashes: [...full.hashes, 7] }))).toThrow(WireError);
  });
});

describe('decodeLockstepFrames under fuzzing', () => {
  for (const players of [1, 2, MAX_LOCKSTEP_PLAYERS]) {
    const decode = bounded((b) => decodeLockstepFrames(codec, players, b));
    const check = (p: LockstepFrames<unknown>): void => {
      must([p.hostFrame, p.ackInput, p.ackHash, p.firstFrame].every(frameOk), 'frames in range');
      must(p.rows.length <= MAX_FRAMES_PER_PACKET && p.rows.every((r) => r.length === players), 'rows');
      must(p.rows.length === 0 || (p.firstFrame >= 1 && p.firstFrame + p.rows.length - 1 <= MAX_FRAME), 'row frames');
      must(p.roster === undefined || (p.roster.length === p.rows.length && p.roster.every((m) => m >= 0 && m < 1 << players)), 'roster');
      must(JSON.stringify(decodeLockstepFrames(codec, players, encodeLockstepFrames(codec, players, p))) === JSON.stringify(p), 'changed on a second trip');
    };
    it(`round-trips and refuses with WireError only, ${players} players`, () => {
      const rand = seededRandom(1500 + players);
      for (let i = 0; i < 300; i++) {
        const p = randomFrames(rand, players);
        must(JSON.stringify(decodeLockstepFrames(codec, players, encodeLockstepFrames(codec, players, p))) === JSON.stringify(p), 'round trip');
      }
      const valid = Array.from({ length: 30 }, () => encodeLockstepFrames(codec, players, randomFrames(rand, players)));
      const tally = fuzz(fuzzInputs(rand, valid, { random: 3000, mutations: 6000, firstBytes: [LockstepPacketType.Frames] }), decode, isWireError, check);
      expect(tally.ok).toBeGreaterThan(100);
      expect(tally.refused).toBeGreaterThan(3000);
    });
  }
  it('refuses frames for another player count and more rows than a packet holds', () => {
    const p = { hostFrame: 1, ackInput: 0, ackHash: 0, firstFrame: 1, rows: [[codec.neutral, codec.neutral]] };
    expect(() => decodeLockstepFrames(codec, 3, encodeLockstepFrames(codec, 2, p))).toThrow(WireError);
    const rows = Array.from({ length: MAX_FRAMES_PER_PACKET }, () => [codec.neutral]);
    expect(decodeLockstepFrames(codec, 1, encodeLockstepFrames(codec, 1, { ...p, rows })).rows).toHaveLength(MAX_FRAMES_PER_PACKET);
    expect(() => decodeLockstepFrames(codec, 1, encodeLockstepFrames(codec, 1, { ...p, rows: [...rows, [codec.neutral]] }))).toThrow(WireError);
  });
});

describe('decodeLockstepEvent under fuzzing', () => {
  function randomEvent(rand: Random): LockstepEvent {
    const kind = rand();
    if (kind < 0.2) return { type: 'desync', slot: below(rand, MAX_LOCKSTEP_PLAYERS), frame: below(rand, MAX_FRAME + 1) };
    if (kind < 0.3) return { type: 'refused', code: (['full', 'no_resync', 'state_too_large'] as const)[below(rand, 3)]! };
    if (kind < 0.5) {
      // Short here, so the thousands of cases stay cheap; the 16 KiB bound has its own test below.
      const n = below(rand, 200);
      return { type: 'chunk', epoch: below(rand, 100), index: below(rand, MAX_STATE_BYTES / STATE_CHUNK_BYTES), bytes: Uint8Array.from({ length: n }, () => below(rand, 256)) };
    }
    const players = 1 + below(rand, MAX_LOCKSTEP_PLAYERS);
    const base = { mode: rand() < 0.5 ? 'rollback' : 'lockstep', slot: below(rand, players), players, tickRate: 1 + below(rand, 1000), inputDelay: below(rand, MAX_LOCKSTEP_WINDOW + 1), maxRollback: 1 + below(rand, MAX_LOCKSTEP_WINDOW) } as const;
    if (kind < 0.75) return { type: 'start', ...base };
    const reason = (['join', 'resume', 'desync', 'mode'] as const)[below(rand, 4)]!;
    return { type: 'resync', reason, ...base, frame: below(rand, MAX_FRAME + 1), roster: below(rand, 1 << players), epoch: below(rand, 1000), size: below(rand, MAX_STATE_BYTES + 1), hash: below(rand, 2 ** 32) };
  }
  it('round-trips and refuses with WireError only', () => {
    const rand = seededRandom(1601);
    for (let i = 0; i < 1000; i++) {
      const e = randomEvent(rand);
      must(JSON.stringify(decodeLockstepEvent(encodeLockstepEvent(e))) === JSON.stringify(e), JSON.stringify(e));
    }
    const valid = Array.from({ length: 40 }, () => encodeLockstepEvent(randomEvent(rand)));
    const check = (e: LockstepEvent): void => {
      if (e.type === 'desync') must(e.slot < MAX_LOCKSTEP_PLAYERS && frameOk(e.frame), 'desync');
      else if (e.type === 'chunk') must(e.bytes.length <= STATE_CHUNK_BYTES && e.index < MAX_STATE_BYTES / STATE_CHUNK_BYTES && frameOk(e.epoch), 'chunk');
      else if (e.type === 'refused') must(['full', 'no_resync', 'state_too_large'].includes(e.code), 'refused');
      else must(e.slot < e.players && e.players <= MAX_LOCKSTEP_PLAYERS && e.maxRollback >= 1 && e.maxRollback <= MAX_LOCKSTEP_WINDOW && e.inputDelay <= MAX_LOCKSTEP_WINDOW, 'start');
      if (e.type === 'resync') must(e.size <= MAX_STATE_BYTES && e.roster < 1 << e.players && frameOk(e.frame) && frameOk(e.epoch), 'resync');
      must(JSON.stringify(decodeLockstepEvent(encodeLockstepEvent(e))) === JSON.stringify(e), 'changed on a second trip');
    };
    const firstBytes = [LockstepPacketType.Start, LockstepPacketType.Desync, LockstepPacketType.Resync, LockstepPacketType.Chunk, LockstepPacketType.Refused];
    const tally = fuzz(fuzzInputs(rand, valid, { random: 3000, mutations: 5000, firstBytes }), bounded(decodeLockstepEvent), isWireError, check);
    expect(tally.ok).toBeGreaterThan(300);
    expect(tally.refused).toBeGreaterThan(2000);
  });
});

describe('a resync state in chunks', () => {
  const header = { type: 'resync', reason: 'join', mode: 'rollback', slot: 1, players: 2, tickRate: 60, inputDelay: 2, maxRollback: 10, frame: 99, roster: 1, epoch: 1, size: 0, hash: 0 } as const;

  it('takes a state of exactly MAX_STATE_BYTES in 64 chunks and refuses one byte more, in the header and in the assembler', () => {
    const state = new Uint8Array(MAX_STATE_BYTES);
    for (let i = 0; i < state.length; i++) state[i] = i * 7;
    const chunks = encodeStateChunks(3, state);
    expect(chunks).toHaveLength(MAX_STATE_BYTES / STATE_CHUNK_BYTES);
    const a = new StateAssembler();
    expect(a.begin(3, state.length, MAX_STATE_BYTES)).toBeNull();
    let whole: Uint8Array | null = null;
    for (const c of chunks) {
      const e = decodeLockstepEvent(c);
      if (e.type !== 'chunk') throw new Error('not a chunk');
      whole = a.add(e.epoch, e.index, e.bytes);
    }
    expect(whole && Buffer.from(whole).equals(Buffer.from(state))).toBe(true);
    expect(decodeLockstepEvent(encodeLockstepEvent({ ...header, size: MAX_STATE_BYTES })).type).toBe('resync');
    expect(() => decodeLockstepEvent(encodeLockstepEvent({ ...header, size: MAX_STATE_BYTES + 1 }))).toThrow(/over 1048576/);
    expect(() => a.begin(4, MAX_STATE_BYTES + 1, MAX_STATE_BYTES + 1)).toThrow(WireError);
    // A session's own limit: at it, and one byte past it.
    expect(a.begin(5, 1000, 1000)).toBeNull();
    expect(() => a.begin(6, 1001, 1000)).toThrow(/1001 bytes is over the 1000-byte limit/);
    // A chunk index past 64 and a chunk over 16 KiB are refused by the decoder.
    expect(() => decodeLockstepEvent(encodeLockstepEvent({ type: 'chunk', epoch: 1, index: 64, bytes: new Uint8Array(1) }))).toThrow(WireError);
    expect(() => decodeLockstepEvent(encodeLockstepEvent({ type: 'chunk', epoch: 1, index: 0, bytes: new Uint8Array(STATE_CHUNK_BYTES + 1) }))).toThrow(WireError);
  });

  it('refuses chunks out of order, of the wrong size or another epoch with WireError, under fuzzing', () => {
    const rand = seededRandom(1701);
    let done = 0;
    let refused = 0;
    for (let run = 0; run < 400; run++) {
      const size = below(rand, 3) === 0 ? below(rand, 100) : below(rand, 5 * STATE_CHUNK_BYTES);
      const chunks = encodeStateChunks(7, Uint8Array.from({ length: size }, () => below(rand, 256)));
      // Mutate a few: swap two, drop one, change one's bytes or epoch.
      const edited = chunks.map((c) => (rand() < 0.1 ? mutateChunk(rand, c) : c));
      if (rand() < 0.2 && edited.length > 1) edited.reverse();
      const a = new StateAssembler();
      try {
        let whole = a.begin(7, size, 5 * STATE_CHUNK_BYTES);
        for (const c of edited) {
          const e = decodeLockstepEvent(c);
          if (e.type !== 'chunk') throw new WireError('netcode: not a chunk');
          whole = a.add(e.epoch, e.index, e.bytes);
        }
        if (whole) {
          must(whole.length === size, 'a whole state of the header size');
          done++;
        }
      } catch (err) {
        must(err instanceof WireError, String(err));
        refused++;
      }
    }
    expect(done).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(20);
  });
});

function mutateChunk(rand: Random, c: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const b = Uint8Array.from(c);
  switch (below(rand, 3)) {
    case 0:
      b[1] = (b[1]! + 1) & 0x7f; // another epoch
      return b;
    case 1:
      return b.subarray(0, Math.max(1, b.length - 1 - below(rand, 10))); // short
    default:
      b[2] = (b[2]! + 1) & 0x7f; // another index
      return b;
  }
}
