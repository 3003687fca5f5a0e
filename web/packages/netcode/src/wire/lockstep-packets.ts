import { ByteReader, ByteWriter, WireError } from './bytes.js';
import type { InputCodec } from './input-codec.js';

/**
 * Packets of the deterministic modes (rollback and host-clocked lockstep).
 * Type bytes sit beside the snapshot netcode's (0x81–0x82 game, 0x91–0x95
 * events) so one channel can never mistake one for the other.
 */
export const LockstepPacketType = {
  /** Client → host, game channel: its inputs by frame and its state hashes. */
  Inputs: 0x83,
  /** Host → client, game channel: confirmed frames, every player's input in each. */
  Frames: 0x84,
  /** Host → client, events channel: the match starts, your slot. */
  Start: 0x96,
  /** Host → client, events channel: a peer's state hash differed from the host's. */
  Desync: 0x97,
} as const;

/** Most frames (inputs or hashes) one packet carries: 2 s at 60 Hz. */
export const MAX_FRAMES_PER_PACKET = 120;
/** Most players a deterministic match has: every frame carries each one's input. */
export const MAX_LOCKSTEP_PLAYERS = 16;
/** The largest frame number accepted (580 years at 60 Hz), so frame arithmetic stays exact. */
export const MAX_FRAME = 2 ** 40;

export interface LockstepInputs<I> {
  /** The newest frame up to which this client holds every confirmed frame (0 = none). */
  ackFrame: number;
  /** The frame the first input is for; inputs follow one per frame. */
  firstFrame: number;
  inputs: I[];
  /** The frame of the first hash; hashes follow one per frame, of the state after that frame. */
  hashFrame: number;
  hashes: number[];
}

export interface LockstepFrames<I> {
  /** The frame the host is running as it sends this: rollback clients keep their clock level with it. */
  hostFrame: number;
  /** The newest frame up to which the host has this client's input or has confirmed it without (0 = none). */
  ackInput: number;
  /** The newest frame whose hash from this client the host has compared (0 = none). */
  ackHash: number;
  /** The first frame of `rows`; rows follow one per frame. */
  firstFrame: number;
  /** One row per frame, each with every player's input by slot. */
  rows: I[][];
}

export type LockstepMode = 'rollback' | 'lockstep';

export type LockstepEvent =
  | { type: 'start'; mode: LockstepMode; slot: number; players: number; tickRate: number; inputDelay: number; maxRollback: number }
  | { type: 'desync'; slot: number; frame: number };

function checkFrame(frame: number): number {
  if (frame > MAX_FRAME) throw new WireError('netcode: frame out of range');
  return frame;
}

/** Writes inputs as runs of equal ones: a held key costs a count, not a byte per frame. */
function writeRuns<I>(w: ByteWriter, codec: InputCodec<I>, items: readonly I[]): void {
  const runs: { input: I; count: number }[] = [];
  for (const input of items) {
    const last = runs[runs.length - 1];
    if (last && codec.equals(last.input, input)) last.count++;
    else runs.push({ input, count: 1 });
  }
  w.varint(runs.length);
  for (const run of runs) {
    w.varint(run.count);
    const { buf, offset } = w.claim(codec.size);
    codec.write(run.input, buf, offset);
  }
}

function readRuns<I>(r: ByteReader, codec: InputCodec<I>, max: number): I[] {
  const runCount = r.varint();
  const out: I[] = [];
  for (let k = 0; k < runCount; k++) {
    const count = r.varint();
    if (count === 0 || out.length + count > max) throw new WireError('netcode: bad input run');
    const input = codec.read(r.bytes(codec.size), 0);
    for (let i = 0; i < count; i++) out.push(input);
  }
  return out;
}

export function encodeLockstepInputs<I>(codec: InputCodec<I>, p: LockstepInputs<I>, w = new ByteWriter()): Uint8Array<ArrayBuffer> {
  w.reset();
  w.u8(LockstepPacketType.Inputs).varint(p.ackFrame).varint(p.firstFrame);
  writeRuns(w, codec, p.inputs);
  w.varint(p.hashFrame).varint(p.hashes.length);
  for (const h of p.hashes) w.u32(h);
  return w.finish();
}

export function decodeLockstepInputs<I>(codec: InputCodec<I>, data: Uint8Array): LockstepInputs<I> {
  const r = new ByteReader(data);
  if (r.u8() !== LockstepPacketType.Inputs) throw new WireError('netcode: not a lockstep inputs packet');
  const ackFrame = checkFrame(r.varint());
  const firstFrame = checkFrame(r.varint());
  const inputs = readRuns(r, codec, MAX_FRAMES_PER_PACKET);
  if (inputs.length > 0 && (firstFrame < 1 || firstFrame + inputs.length - 1 > MAX_FRAME)) throw new WireError('netcode: input frames out of range');
  const hashFrame = checkFrame(r.varint());
  const n = r.varint();
  // Checked before reading: a count is 4 bytes a hash, so it cannot promise more than the packet holds.
  if (n > MAX_FRAMES_PER_PACKET || n * 4 > r.remaining) throw new WireError('netcode: bad hash count');
  const hashes: number[] = [];
  for (let i = 0; i < n; i++) hashes.push(r.u32());
  if (n > 0 && (hashFrame < 1 || hashFrame + n - 1 > MAX_FRAME)) throw new WireError('netcode: hash frames out of range');
  return { ackFrame, firstFrame, inputs, hashFrame, hashes };
}

export function encodeLockstepFrames<I>(codec: InputCodec<I>, players: number, p: LockstepFrames<I>, w = new ByteWriter()): Uint8Array<ArrayBuffer> {
  w.reset();
  w.u8(LockstepPacketType.Frames).varint(p.hostFrame).varint(p.ackInput).varint(p.ackHash).u8(players).varint(p.firstFrame);
  // Each player's column as runs: players hold keys for many frames.
  w.varint(p.rows.length);
  for (let slot = 0; slot < players; slot++) writeRuns(w, codec, p.rows.map((row) => row[slot]!));
  return w.finish();
}

/** Decodes a frames packet; `players` is the match's player count, and a packet for another count is refused. */
export function decodeLockstepFrames<I>(codec: InputCodec<I>, players: number, data: Uint8Array): LockstepFrames<I> {
  const r = new ByteReader(data);
  if (r.u8() !== LockstepPacketType.Frames) throw new WireError('netcode: not a lockstep frames packet');
  const hostFrame = checkFrame(r.varint());
  const ackInput = checkFrame(r.varint());
  const ackHash = checkFrame(r.varint());
  if (r.u8() !== players) throw new WireError('netcode: frames for another player count');
  const firstFrame = checkFrame(r.varint());
  const count = r.varint();
  if (count > MAX_FRAMES_PER_PACKET) throw new WireError('netcode: too many frames');
  if (count > 0 && (firstFrame < 1 || firstFrame + count - 1 > MAX_FRAME)) throw new WireError('netcode: frames out of range');
  const rows: I[][] = Array.from({ length: count }, () => []);
  for (let slot = 0; slot < players; slot++) {
    const column = readRuns(r, codec, count);
    if (column.length !== count) throw new WireError('netcode: short input column');
    for (let f = 0; f < count; f++) rows[f]!.push(column[f]!);
  }
  return { hostFrame, ackInput, ackHash, firstFrame, rows };
}

const MODES: readonly LockstepMode[] = ['rollback', 'lockstep'];

export function encodeLockstepEvent(e: LockstepEvent): Uint8Array<ArrayBuffer> {
  const w = new ByteWriter(32);
  if (e.type === 'start') {
    w.u8(LockstepPacketType.Start).u8(MODES.indexOf(e.mode)).u8(e.slot).u8(e.players);
    w.varint(e.tickRate).varint(e.inputDelay).varint(e.maxRollback);
  } else {
    w.u8(LockstepPacketType.Desync).u8(e.slot).varint(e.frame);
  }
  return w.finish();
}

/** The most frames of input delay or rollback a start message may ask for (4 s at 60 Hz). */
export const MAX_LOCKSTEP_WINDOW = 240;

export function decodeLockstepEvent(data: Uint8Array): LockstepEvent {
  const r = new ByteReader(data);
  switch (r.u8()) {
    case LockstepPacketType.Start: {
      const mode = MODES[r.u8()];
      if (!mode) throw new WireError('netcode: unknown lockstep mode');
      const slot = r.u8();
      const players = r.u8();
      if (players < 1 || players > MAX_LOCKSTEP_PLAYERS || slot >= players) throw new WireError('netcode: bad lockstep roster');
      const tickRate = r.varint();
      const inputDelay = r.varint();
      const maxRollback = r.varint();
      if (tickRate < 1 || tickRate > 1000) throw new WireError('netcode: bad tick rate');
      if (inputDelay > MAX_LOCKSTEP_WINDOW || maxRollback < 1 || maxRollback > MAX_LOCKSTEP_WINDOW) throw new WireError('netcode: bad lockstep window');
      return { type: 'start', mode, slot, players, tickRate, inputDelay, maxRollback };
    }
    case LockstepPacketType.Desync: {
      const slot = r.u8();
      if (slot >= MAX_LOCKSTEP_PLAYERS) throw new WireError('netcode: bad slot');
      return { type: 'desync', slot, frame: checkFrame(r.varint()) };
    }
    default:
      throw new WireError('netcode: unknown lockstep event');
  }
}
