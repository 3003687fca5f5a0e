import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter, WireError } from './bytes.js';

describe('ByteWriter / ByteReader', () => {
  it('round-trips fixed and variable-length integers, growing as needed', () => {
    const w = new ByteWriter(2);
    const unsigned = [0, 1, 127, 128, 300, 16383, 16384, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER];
    const signed = [0, -1, 1, -64, 64, -65, -(2 ** 31), 2 ** 31 - 1];
    w.u8(0xab).u16(0xbeef).u32(0xdeadbeef);
    for (const v of unsigned) w.varint(v);
    for (const v of signed) w.svarint(v);
    const r = new ByteReader(w.finish());
    expect([r.u8(), r.u16(), r.u32()]).toEqual([0xab, 0xbeef, 0xdeadbeef]);
    expect(unsigned.map(() => r.varint())).toEqual(unsigned);
    expect(signed.map(() => r.svarint())).toEqual(signed);
    expect(r.remaining).toBe(0);
  });

  it('keeps small magnitudes short', () => {
    const len = (f: (w: ByteWriter) => void): number => {
      const w = new ByteWriter();
      f(w);
      return w.length;
    };
    expect(len((w) => w.varint(127))).toBe(1);
    expect(len((w) => w.varint(128))).toBe(2);
    expect(len((w) => w.svarint(-64))).toBe(1);
    expect(len((w) => w.svarint(64))).toBe(2);
  });

  it('throws WireError, never reads past the end', () => {
    expect(() => new ByteReader(new Uint8Array([1])).u16()).toThrow(WireError);
    expect(() => new ByteReader(new Uint8Array([0x80, 0x80])).varint()).toThrow(WireError);
    expect(() => new ByteReader(new Uint8Array(9).fill(0xff)).varint()).toThrow(/longer than 8 bytes/);
    // 2^53 and 2^56−1 fit in eight groups but not in a safe integer: the writer refuses them, so must the reader.
    expect(() => new ByteReader(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10])).varint()).toThrow(/out of range/);
    expect(() => new ByteReader(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])).varint()).toThrow(/out of range/);
    expect(() => new ByteWriter().varint(-1)).toThrow(WireError);
  });
});
