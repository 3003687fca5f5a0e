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
  /** Host → client, events channel: play on from this state at a frame boundary (join, resume, desync heal, mode switch); its bytes follow in chunks. */
  Resync: 0x98,
  /** Host → client, events channel: one piece of a resync's state. */
  Chunk: 0x99,
  /** Host → client, events channel: the host will not seat or resync this peer, and why. */
  Refused: 0x9a,
} as const;

/** Bytes of state one chunk carries: a message every WebRTC stack delivers whole (16 KiB). */
export const STATE_CHUNK_BYTES = 16 * 1024;
/** The largest state a resync may carry, whatever a session allows (1 MiB, 64 chunks). */
export const MAX_STATE_BYTES = 1024 * 1024;

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
  /**
   * Which resync of this client the hashes belong to (0 before the first;
   * absent from older peers' packets, read as 0). Hashes of a state that was
   * replaced must never be compared with the host's.
   */
  epoch?: number;
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
  /**
   * Per row, the seats taken in that frame as a bitmask (bit = slot): a
   * join or a leave is part of the confirmed frame, so every peer applies it
   * at the same frame. Absent from older hosts' packets.
   */
  roster?: number[];
}

export type LockstepMode = 'rollback' | 'lockstep';

/** Why a host sends its state: a player joined or came back, a peer diverged, or the match changed mode. */
export type ResyncReason = 'join' | 'resume' | 'desync' | 'mode';
/** Why a host refuses a peer: every seat is taken, the game cannot be resynced (no deserialize), or its state is over the limit. */
export type RefusedCode = 'full' | 'no_resync' | 'state_too_large';

export interface ResyncHeader {
  type: 'resync';
  reason: ResyncReason;
  mode: LockstepMode;
  slot: number;
  players: number;
  tickRate: number;
  inputDelay: number;
  maxRollback: number;
  /** The frame the state is after; confirmed frames follow from frame + 1. */
  frame: number;
  /** Seats taken at `frame` (bit = slot). */
  roster: number;
  /** Counts this client's resyncs; its input packets carry it back. */
  epoch: number;
  /** Bytes of state, sent in ceil(size / STATE_CHUNK_BYTES) chunks. */
  size: number;
  /** The state's hash: the receiver checks what it rebuilt. */
  hash: number;
}

export type LockstepEvent =
  | { type: 'start'; mode: LockstepMode; slot: number; players: number; tickRate: number; inputDelay: number; maxRollback: number }
  | { type: 'desync'; slot: number; frame: number }
  | ResyncHeader
  | { type: 'chunk'; epoch: number; index: number; bytes: Uint8Array }
  | { type: 'refused'; code: RefusedCode };

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
  if (p.epoch !== undefined) w.varint(p.epoch);
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
  if (r.remaining === 0) return { ackFrame, firstFrame, inputs, hashFrame, hashes };
  return { ackFrame, firstFrame, inputs, hashFrame, hashes, epoch: checkFrame(r.varint()) };
}

export function encodeLockstepFrames<I>(codec: InputCodec<I>, players: number, p: LockstepFrames<I>, w = new ByteWriter()): Uint8Array<ArrayBuffer> {
  w.reset();
  w.u8(LockstepPacketType.Frames).varint(p.hostFrame).varint(p.ackInput).varint(p.ackHash).u8(players).varint(p.firstFrame);
  // Each player's column as runs: players hold keys for many frames.
  w.varint(p.rows.length);
  for (let slot = 0; slot < players; slot++) writeRuns(w, codec, p.rows.map((row) => row[slot]!));
  if (p.roster) {
    // Seats change rarely: runs of equal masks, almost always one.
    const runs: { mask: number; count: number }[] = [];
    for (const mask of p.roster) {
      const last = runs[runs.length - 1];
      if (last && last.mask === mask) last.count++;
      else runs.push({ mask, count: 1 });
    }
    w.varint(runs.length);
    for (const run of runs) w.varint(run.count).u16(run.mask);
  }
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
  if (r.remaining === 0) return { hostFrame, ackInput, ackHash, firstFrame, rows };
  const roster: number[] = [];
  const runCount = r.varint();
  for (let k = 0; k < runCount; k++) {
    const n = r.varint();
    const mask = r.u16();
    if (n === 0 || roster.length + n > count || mask >= 1 << players) throw new WireError('netcode: bad roster run');
    for (let i = 0; i < n; i++) roster.push(mask);
  }
  if (roster.length !== count) throw new WireError('netcode: short roster');
  return { hostFrame, ackInput, ackHash, firstFrame, rows, roster };
}

const MODES: readonly LockstepMode[] = ['rollback', 'lockstep'];
const REASONS: readonly ResyncReason[] = ['join', 'resume', 'desync', 'mode'];
const REFUSALS: readonly RefusedCode[] = ['full', 'no_resync', 'state_too_large'];

export function encodeLockstepEvent(e: LockstepEvent): Uint8Array<ArrayBuffer> {
  const w = new ByteWriter(32);
  if (e.type === 'start') {
    w.u8(LockstepPacketType.Start).u8(MODES.indexOf(e.mode)).u8(e.slot).u8(e.players);
    w.varint(e.tickRate).varint(e.inputDelay).varint(e.maxRollback);
  } else if (e.type === 'desync') {
    w.u8(LockstepPacketType.Desync).u8(e.slot).varint(e.frame);
  } else if (e.type === 'resync') {
    w.u8(LockstepPacketType.Resync).u8(REASONS.indexOf(e.reason)).u8(MODES.indexOf(e.mode)).u8(e.slot).u8(e.players);
    w.varint(e.tickRate).varint(e.inputDelay).varint(e.maxRollback);
    w.varint(e.frame).u16(e.roster).varint(e.epoch).varint(e.size).u32(e.hash);
  } else if (e.type === 'chunk') {
    w.u8(LockstepPacketType.Chunk).varint(e.epoch).varint(e.index).bytes(e.bytes);
  } else {
    w.u8(LockstepPacketType.Refused).u8(REFUSALS.indexOf(e.code));
  }
  return w.finish();
}

/** The most frames of input delay or rollback a start message may ask for (4 s at 60 Hz). */
export const MAX_LOCKSTEP_WINDOW = 240;

/** What start and resync both say of the match: mode, our slot, players, tick rate and the windows. */
function readMatch(r: ByteReader): { mode: LockstepMode; slot: number; players: number; tickRate: number; inputDelay: number; maxRollback: number } {
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
  return { mode, slot, players, tickRate, inputDelay, maxRollback };
}

export function decodeLockstepEvent(data: Uint8Array): LockstepEvent {
  const r = new ByteReader(data);
  switch (r.u8()) {
    case LockstepPacketType.Start:
      return { type: 'start', ...readMatch(r) };
    case LockstepPacketType.Desync: {
      const slot = r.u8();
      if (slot >= MAX_LOCKSTEP_PLAYERS) throw new WireError('netcode: bad slot');
      return { type: 'desync', slot, frame: checkFrame(r.varint()) };
    }
    case LockstepPacketType.Resync: {
      const reason = REASONS[r.u8()];
      if (!reason) throw new WireError('netcode: unknown resync reason');
      const { mode, slot, players, tickRate, inputDelay, maxRollback } = readMatch(r);
      const frame = checkFrame(r.varint());
      const roster = r.u16();
      // The seats must fit the player count (a joiner's own is taken in a later frame).
      if (roster >= 1 << players) throw new WireError('netcode: bad resync roster');
      const epoch = checkFrame(r.varint());
      const size = r.varint();
      if (size > MAX_STATE_BYTES) throw new WireError(`netcode: a resync state of ${size} bytes is over ${MAX_STATE_BYTES}`);
      const hash = r.u32();
      return { type: 'resync', reason, mode, slot, players, tickRate, inputDelay, maxRollback, frame, roster, epoch, size, hash };
    }
    case LockstepPacketType.Chunk: {
      const epoch = checkFrame(r.varint());
      const index = r.varint();
      if (index >= MAX_STATE_BYTES / STATE_CHUNK_BYTES || r.remaining > STATE_CHUNK_BYTES) throw new WireError('netcode: bad state chunk');
      return { type: 'chunk', epoch, index, bytes: r.bytes(r.remaining) };
    }
    case LockstepPacketType.Refused: {
      const code = REFUSALS[r.u8()];
      if (!code) throw new WireError('netcode: unknown refusal');
      return { type: 'refused', code };
    }
    default:
      throw new WireError('netcode: unknown lockstep event');
  }
}

/**
 * Puts a resync's state back together from its chunks, which come in order
 * on the reliable channel. Bounded: the buffer is the header's size, which
 * the receiver caps (its own maxStateBytes, never over MAX_STATE_BYTES), and
 * every chunk must be the next one and exactly the length left to fill.
 */
export class StateAssembler {
  private buf: Uint8Array<ArrayBuffer> | null = null;
  private filled = 0;
  private next = 0;
  private epoch = -1;

  /** Starts a state of `size` bytes; refuses one over `maxBytes`. A state of 0 bytes is complete at once (returned). */
  begin(epoch: number, size: number, maxBytes: number): Uint8Array<ArrayBuffer> | null {
    this.buf = null;
    if (size > Math.min(maxBytes, MAX_STATE_BYTES)) throw new WireError(`netcode: a resync state of ${size} bytes is over the ${Math.min(maxBytes, MAX_STATE_BYTES)}-byte limit`);
    this.buf = new Uint8Array(size);
    this.filled = 0;
    this.next = 0;
    this.epoch = epoch;
    if (size > 0) return null;
    this.buf = null;
    return new Uint8Array(0);
  }

  /** Whether a state is being assembled. */
  get active(): boolean {
    return this.buf !== null;
  }

  /** Adds the next chunk; returns the whole state once the last one is in. */
  add(epoch: number, index: number, bytes: Uint8Array): Uint8Array<ArrayBuffer> | null {
    const buf = this.buf;
    if (!buf || epoch !== this.epoch) throw new WireError('netcode: a state chunk without its resync');
    const want = Math.min(STATE_CHUNK_BYTES, buf.length - this.filled);
    if (index !== this.next || bytes.length !== want) {
      this.buf = null;
      throw new WireError(`netcode: state chunk ${index} out of order or of the wrong size`);
    }
    buf.set(bytes, this.filled);
    this.filled += bytes.length;
    this.next++;
    if (this.filled < buf.length) return null;
    this.buf = null;
    return buf;
  }
}

/** The chunk events that carry `state` after its resync header. */
export function encodeStateChunks(epoch: number, state: Uint8Array): Uint8Array<ArrayBuffer>[] {
  const out: Uint8Array<ArrayBuffer>[] = [];
  for (let at = 0, index = 0; at < state.length; at += STATE_CHUNK_BYTES, index++) {
    out.push(encodeLockstepEvent({ type: 'chunk', epoch, index, bytes: state.subarray(at, at + STATE_CHUNK_BYTES) }));
  }
  return out;
}
