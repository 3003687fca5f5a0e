import { ByteReader, ByteWriter, WireError } from './bytes.js';
import type { InputCodec } from './input-codec.js';

/**
 * The netcode's packet layouts. Game-channel packets (unreliable) carry
 * inputs up and snapshots down; event packets ride the reliable channel.
 * Type bytes start at 0x80 so they never collide with small hand-rolled
 * packet kinds an app may also send on the same channel.
 */
export const PacketType = {
  Input: 0x81,
  Snapshot: 0x82,
  Welcome: 0x91,
  Roster: 0x92,
  Kicked: 0x93,
  User: 0x94,
  Hello: 0x95,
} as const;

/** Inputs from newest-acknowledged onwards, oldest first. */
export interface InputPacket<I> {
  packetSeq: number;
  /** The newest snapshot tick the client holds: the host's delta baseline. 0 = none. */
  ackTick: number;
  /** Client clock, ms mod 2^16, echoed back for RTT. */
  sentAt: number;
  /** The host tick the client was showing, in 1/16 ticks (0 = none): what lag compensation rewinds to. */
  viewTick16: number;
  firstSeq: number;
  inputs: I[];
}

export interface SnapshotHeader {
  packetSeq: number;
  tick: number;
  /** The tick this snapshot is a delta against; 0 = full. */
  baseTick: number;
  /** The last input sequence of this client the host applied (0 = none yet). */
  ackSeq: number;
  /** Ticks so far in which the host repeated this client's last input because the next was late. */
  stickyTotal: number;
  /** The client's sentAt from its newest input packet, and how long the host held it (ms). */
  echo: { sentAt: number; holdMs: number } | null;
  /** Fewest inputs the host had buffered for this client since the last snapshot (capped at 255). */
  inputSlack: number;
  /** Share of this client's packets the host saw lost lately, 0–255 = 0–100 %. */
  upLoss255: number;
  hash: number | null;
}

const FLAG_ECHO = 1;
const FLAG_HASH = 2;
/** No legitimate client sends more than this many inputs in one packet (2 s at 60 Hz). */
export const MAX_INPUTS_PER_PACKET = 120;

export function encodeInputPacket<I>(codec: InputCodec<I>, p: InputPacket<I>, w = new ByteWriter()): Uint8Array<ArrayBuffer> {
  w.reset();
  w.u8(PacketType.Input).u16(p.packetSeq).varint(p.ackTick).u16(p.sentAt).varint(p.viewTick16).varint(p.firstSeq);
  // Held keys make long runs of equal inputs: repeating 100 ms of them costs a few bytes.
  const runs: { input: I; count: number }[] = [];
  for (const input of p.inputs) {
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
  return w.finish();
}

export function decodeInputPacket<I>(codec: InputCodec<I>, data: Uint8Array): InputPacket<I> {
  const r = new ByteReader(data);
  if (r.u8() !== PacketType.Input) throw new WireError('netcode: not an input packet');
  const packetSeq = r.u16();
  const ackTick = r.varint();
  const sentAt = r.u16();
  const viewTick16 = r.varint();
  const firstSeq = r.varint();
  const runCount = r.varint();
  const inputs: I[] = [];
  for (let k = 0; k < runCount; k++) {
    const count = r.varint();
    if (count === 0 || inputs.length + count > MAX_INPUTS_PER_PACKET) throw new WireError('netcode: bad input run');
    const bytes = r.bytes(codec.size);
    const input = codec.read(bytes, 0);
    for (let i = 0; i < count; i++) inputs.push(input);
  }
  if (firstSeq < 1 && inputs.length > 0) throw new WireError('netcode: input sequences start at 1');
  return { packetSeq, ackTick, sentAt, viewTick16, firstSeq, inputs };
}

/** Writes a snapshot header; the caller appends the entity delta. */
export function writeSnapshotHeader(w: ByteWriter, h: SnapshotHeader): void {
  w.u8(PacketType.Snapshot).u16(h.packetSeq).varint(h.tick).varint(h.baseTick).varint(h.ackSeq).varint(h.stickyTotal);
  w.u8((h.echo ? FLAG_ECHO : 0) | (h.hash !== null ? FLAG_HASH : 0));
  if (h.echo) w.u16(h.echo.sentAt).varint(Math.max(0, Math.round(h.echo.holdMs)));
  w.u8(Math.min(255, Math.max(0, h.inputSlack))).u8(h.upLoss255);
  if (h.hash !== null) w.u32(h.hash);
}

/** The largest snapshot tick a client accepts. */
export const MAX_TICK = 2 ** 40;

export function readSnapshotHeader(r: ByteReader): SnapshotHeader {
  if (r.u8() !== PacketType.Snapshot) throw new WireError('netcode: not a snapshot');
  const packetSeq = r.u16();
  const tick = r.varint();
  const baseTick = r.varint();
  const ackSeq = r.varint();
  const stickyTotal = r.varint();
  const flags = r.u8();
  const echo = flags & FLAG_ECHO ? { sentAt: r.u16(), holdMs: r.varint() } : null;
  const inputSlack = r.u8();
  const upLoss255 = r.u8();
  const hash = flags & FLAG_HASH ? r.u32() : null;
  if (baseTick >= tick && baseTick !== 0) throw new WireError('netcode: baseline after snapshot');
  // A hostile host could send a tick whose 1/16ths the client cannot echo
  // back (past 2^53): the client would stop sending inputs. No honest game
  // gets near the bound (580 years at 60 Hz).
  if (tick > MAX_TICK) throw new WireError('netcode: tick out of range');
  return { packetSeq, tick, baseTick, ackSeq, stickyTotal, echo, inputSlack, upLoss255, hash };
}

/** Reliable-channel messages of the netcode itself. */
export type NetEvent =
  | { type: 'welcome'; slot: number; tickRate: number; snapshotRate: number }
  | { type: 'roster'; players: { slot: number; id: string }[] }
  | { type: 'kicked'; reason: string }
  | { type: 'user'; payload: Uint8Array }
  /** Client to host: "I am listening now, (re)send my welcome". The game may mount after the peer opened. */
  | { type: 'hello' };

const text = new TextEncoder();
const untext = new TextDecoder();

/** The longest string an event carries, in UTF-8 bytes. */
export const MAX_STRING_BYTES = 1024;

/**
 * Writes s, cut to MAX_STRING_BYTES at a character boundary: a kick with a
 * long reason must still reach the player, and readString refuses more.
 */
function writeString(w: ByteWriter, s: string): void {
  let b = text.encode(s);
  if (b.length > MAX_STRING_BYTES) {
    let end = MAX_STRING_BYTES;
    while (end > 0 && (b[end]! & 0xc0) === 0x80) end--; // back off to the start of a character
    b = b.subarray(0, end);
  }
  w.varint(b.length).bytes(b);
}

function readString(r: ByteReader): string {
  const n = r.varint();
  if (n > MAX_STRING_BYTES) throw new WireError('netcode: string too long');
  return untext.decode(r.bytes(n));
}

export function encodeEvent(e: NetEvent): Uint8Array<ArrayBuffer> {
  const w = new ByteWriter(64);
  switch (e.type) {
    case 'welcome':
      w.u8(PacketType.Welcome).varint(e.slot).varint(e.tickRate).varint(e.snapshotRate);
      break;
    case 'roster':
      w.u8(PacketType.Roster).varint(e.players.length);
      for (const p of e.players) {
        w.varint(p.slot);
        writeString(w, p.id);
      }
      break;
    case 'kicked':
      w.u8(PacketType.Kicked);
      writeString(w, e.reason);
      break;
    case 'user':
      w.u8(PacketType.User).bytes(e.payload);
      break;
    case 'hello':
      w.u8(PacketType.Hello);
      break;
  }
  return w.finish();
}

export function decodeEvent(data: Uint8Array): NetEvent {
  const r = new ByteReader(data);
  switch (r.u8()) {
    case PacketType.Welcome:
      return { type: 'welcome', slot: r.varint(), tickRate: r.varint(), snapshotRate: r.varint() };
    case PacketType.Roster: {
      const n = r.varint();
      if (n > 256) throw new WireError('netcode: roster too long');
      const players: { slot: number; id: string }[] = [];
      for (let i = 0; i < n; i++) players.push({ slot: r.varint(), id: readString(r) });
      return { type: 'roster', players };
    }
    case PacketType.Kicked:
      return { type: 'kicked', reason: readString(r) };
    case PacketType.User:
      return { type: 'user', payload: data.slice(1) };
    case PacketType.Hello:
      return { type: 'hello' };
    default:
      throw new WireError('netcode: unknown event type');
  }
}
