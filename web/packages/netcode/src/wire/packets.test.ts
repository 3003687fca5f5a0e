import { describe, expect, it } from 'vitest';
import { seededRandom } from '../transport/rng.js';
import { ByteReader, ByteWriter, WireError } from './bytes.js';
import { buttonsCodec } from './input-codec.js';
import {
  decodeEvent,
  decodeInputPacket,
  encodeEvent,
  encodeInputPacket,
  MAX_INPUTS_PER_PACKET,
  MAX_STRING_BYTES,
  MAX_TICK,
  readSnapshotHeader,
  writeSnapshotHeader,
  type NetEvent,
  type SnapshotHeader,
} from './packets.js';

const codec = buttonsCodec(['up', 'down', 'left', 'right', 'fire'] as const);
const held = { up: true, down: false, left: false, right: true, fire: false };
const idle = codec.neutral;

describe('input packets', () => {
  it('round-trip, with runs of equal inputs sent once', () => {
    const inputs = [held, held, held, held, held, held, idle, idle, held];
    const p = { packetSeq: 65535, ackTick: 12345, sentAt: 4321, viewTick16: 16 * 12340 + 8, firstSeq: 900, inputs };
    const bytes = encodeInputPacket(codec, p);
    expect(decodeInputPacket(codec, bytes)).toEqual(p);
    // 9 inputs in 3 runs: a header of ~13 bytes plus 2 bytes a run.
    expect(bytes.length).toBeLessThanOrEqual(20);
  });

  it('costs about a byte per input change, not per input (100 ms of redundancy is nearly free)', () => {
    const steady = encodeInputPacket(codec, { packetSeq: 1, ackTick: 1, sentAt: 1, viewTick16: 16, firstSeq: 1, inputs: Array(12).fill(held) });
    const single = encodeInputPacket(codec, { packetSeq: 1, ackTick: 1, sentAt: 1, viewTick16: 16, firstSeq: 1, inputs: [held] });
    expect(steady.length).toBe(single.length);
  });

  it('refuses more inputs than a packet may carry, and junk, with WireError', () => {
    const w = new ByteWriter();
    w.u8(0x81).u16(0).varint(0).u16(0).varint(0).varint(1).varint(1).varint(MAX_INPUTS_PER_PACKET + 1).u8(0);
    expect(() => decodeInputPacket(codec, w.finish())).toThrow(WireError);
    const rand = seededRandom(3);
    for (let i = 0; i < 2000; i++) {
      const junk = new Uint8Array(Math.floor(rand() * 30)).map(() => Math.floor(rand() * 256));
      if (junk.length > 0) junk[0] = 0x81;
      try {
        decodeInputPacket(codec, junk);
      } catch (err) {
        expect(err).toBeInstanceOf(WireError);
      }
    }
  });
});

describe('snapshot headers and events', () => {
  it('round-trip', () => {
    const h: SnapshotHeader = {
      packetSeq: 7,
      tick: 1000,
      baseTick: 994,
      ackSeq: 950,
      stickyTotal: 3,
      echo: { sentAt: 65000, holdMs: 12 },
      inputSlack: 2,
      upLoss255: 25,
      hash: 0xfeedbeef,
    };
    const w = new ByteWriter();
    writeSnapshotHeader(w, h);
    expect(readSnapshotHeader(new ByteReader(w.finish()))).toEqual(h);
    const bare = { ...h, echo: null, hash: null, baseTick: 0 };
    w.reset();
    writeSnapshotHeader(w, bare);
    expect(readSnapshotHeader(new ByteReader(w.finish()))).toEqual(bare);
  });

  it('refuses a baseline that is not older than the snapshot', () => {
    const w = new ByteWriter();
    writeSnapshotHeader(w, { packetSeq: 0, tick: 5, baseTick: 5, ackSeq: 0, stickyTotal: 0, echo: null, inputSlack: 0, upLoss255: 0, hash: null });
    expect(() => readSnapshotHeader(new ByteReader(w.finish()))).toThrow(WireError);
  });

  it('takes ticks up to MAX_TICK and refuses one past it (a hostile host cannot stop our inputs)', () => {
    const at = (tick: number): SnapshotHeader => ({ packetSeq: 0, tick, baseTick: 0, ackSeq: 0, stickyTotal: 0, echo: null, inputSlack: 0, upLoss255: 0, hash: null });
    const w = new ByteWriter();
    writeSnapshotHeader(w, at(MAX_TICK));
    expect(readSnapshotHeader(new ByteReader(w.finish())).tick).toBe(MAX_TICK);
    w.reset();
    writeSnapshotHeader(w, at(MAX_TICK + 1));
    expect(() => readSnapshotHeader(new ByteReader(w.finish()))).toThrow(WireError);
    // What the limit protects: the client echoes the tick in 1/16ths, and that must still encode.
    expect(() => new ByteWriter().varint(MAX_TICK * 16)).not.toThrow();
  });

  it('cuts a long string at MAX_STRING_BYTES on a character boundary, so the event still arrives', () => {
    const exact = 'k'.repeat(MAX_STRING_BYTES);
    expect(decodeEvent(encodeEvent({ type: 'kicked', reason: exact }))).toEqual({ type: 'kicked', reason: exact });
    // 1023 ASCII bytes, then a 4-byte emoji that does not fit: it is dropped whole, not split.
    const over = 'k'.repeat(MAX_STRING_BYTES - 1) + '😀' + 'tail';
    const got = decodeEvent(encodeEvent({ type: 'kicked', reason: over }));
    expect(got).toEqual({ type: 'kicked', reason: 'k'.repeat(MAX_STRING_BYTES - 1) });
  });

  it('codes every event', () => {
    const events: NetEvent[] = [
      { type: 'welcome', slot: 3, tickRate: 60, snapshotRate: 30 },
      { type: 'roster', players: [{ slot: 0, id: 'p1' }, { slot: 1, id: 'p2' }] },
      { type: 'kicked', reason: 'speed: moved 40 px in one tick' },
      { type: 'user', payload: new Uint8Array([1, 2, 3]) },
    ];
    for (const e of events) {
      expect(decodeEvent(encodeEvent(e))).toEqual(e);
    }
    expect(() => decodeEvent(new Uint8Array([0x99]))).toThrow(WireError);
  });
});
