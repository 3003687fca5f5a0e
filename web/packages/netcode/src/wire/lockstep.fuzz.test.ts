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
  LockstepPacketType,
  MAX_FRAME,
  MAX_FRAMES_PER_PACKET,
  MAX_LOCKSTEP_PLAYERS,
  MAX_LOCKSTEP_WINDOW,
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
  return { ackFrame: below(rand, MAX_FRAME + 1), firstFrame: inputs.length ? randomFrame(rand) : 0, inputs, hashFrame: hashes.length ? randomFrame(rand) : 0, hashes };
}

function randomFrames(rand: Random, players: number): LockstepFrames<unknown> {
  const n = below(rand, MAX_FRAMES_PER_PACKET + 1);
  const rows = Array.from({ length: n }, () => Array.from({ length: players }, () => randomInput(rand)));
  // Held keys: most rows repeat the one before.
  for (let i = 1; i < n; i++) if (rand() < 0.8) rows[i] = [...rows[i - 1]!];
  return { hostFrame: below(rand, MAX_FRAME + 1), ackInput: below(rand, MAX_FRAME + 1), ackHash: below(rand, MAX_FRAME + 1), firstFrame: n ? randomFrame(rand) : 0, rows };
}

describe('decodeLockstepInputs under fuzzing', () => {
  const decode = bounded((b) => decodeLockstepInputs(codec, b));
  const check = (p: LockstepInputs<unknown>): void => {
    must([p.ackFrame, p.firstFrame, p.hashFrame].every(frameOk), 'frames in range');
    must(p.inputs.length <= MAX_FRAMES_PER_PACKET && p.hashes.length <= MAX_FRAMES_PER_PACKET, 'counts');
    must(p.inputs.length === 0 || (p.firstFrame >= 1 && p.firstFrame + p.inputs.length - 1 <= MAX_FRAME), 'input frames');
    must(p.hashes.every((h) => Number.isInteger(h) && h >= 0 && h < 2 ** 32), 'hashes');
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
    if (rand() < 0.5) return { type: 'desync', slot: below(rand, MAX_LOCKSTEP_PLAYERS), frame: below(rand, MAX_FRAME + 1) };
    const players = 1 + below(rand, MAX_LOCKSTEP_PLAYERS);
    return { type: 'start', mode: rand() < 0.5 ? 'rollback' : 'lockstep', slot: below(rand, players), players, tickRate: 1 + below(rand, 1000), inputDelay: below(rand, MAX_LOCKSTEP_WINDOW + 1), maxRollback: 1 + below(rand, MAX_LOCKSTEP_WINDOW) };
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
      else must(e.slot < e.players && e.players <= MAX_LOCKSTEP_PLAYERS && e.maxRollback >= 1 && e.maxRollback <= MAX_LOCKSTEP_WINDOW && e.inputDelay <= MAX_LOCKSTEP_WINDOW, 'start');
      must(JSON.stringify(decodeLockstepEvent(encodeLockstepEvent(e))) === JSON.stringify(e), 'changed on a second trip');
    };
    const tally = fuzz(fuzzInputs(rand, valid, { random: 3000, mutations: 5000, firstBytes: [LockstepPacketType.Start, LockstepPacketType.Desync] }), bounded(decodeLockstepEvent), isWireError, check);
    expect(tally.ok).toBeGreaterThan(300);
    expect(tally.refused).toBeGreaterThan(2000);
  });
});
