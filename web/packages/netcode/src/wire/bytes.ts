/**
 * Growable little-endian byte writer and a bounds-checked reader with
 * LEB128 varints. Every game packet is built from these, never JSON: a
 * held key costs one byte, not a dozen.
 */

/** A packet that is truncated or malformed. Receivers drop it and count it. */
export class WireError extends Error {
  override readonly name = 'WireError';
}

export class ByteWriter {
  private buf: Uint8Array<ArrayBuffer>;
  private pos = 0;

  constructor(initialSize = 256) {
    this.buf = new Uint8Array(initialSize);
  }

  get length(): number {
    return this.pos;
  }

  u8(v: number): this {
    this.reserve(1);
    this.buf[this.pos++] = v & 0xff;
    return this;
  }

  u16(v: number): this {
    this.reserve(2);
    this.buf[this.pos++] = v & 0xff;
    this.buf[this.pos++] = (v >>> 8) & 0xff;
    return this;
  }

  u32(v: number): this {
    this.reserve(4);
    for (let i = 0; i < 4; i++) this.buf[this.pos++] = (v >>> (8 * i)) & 0xff;
    return this;
  }

  /**
   * Unsigned varint of any safe integer (up to 2^53): arithmetic, not
   * bit shifts, because field masks and tick numbers can pass 2^31.
   */
  varint(v: number): this {
    if (!Number.isSafeInteger(v) || v < 0) throw new WireError(`netcode: varint out of range: ${v}`);
    this.reserve(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
    return this;
  }

  /** Signed varint, zigzag-mapped so small magnitudes of either sign stay short. */
  svarint(v: number): this {
    return this.varint(v < 0 ? -2 * v - 1 : 2 * v);
  }

  bytes(src: Uint8Array, offset = 0, length = src.length - offset): this {
    this.reserve(length);
    this.buf.set(src.subarray(offset, offset + length), this.pos);
    this.pos += length;
    return this;
  }

  /** Room for n more bytes, for callers that write in place (input codecs). */
  claim(n: number): { buf: Uint8Array; offset: number } {
    this.reserve(n);
    const offset = this.pos;
    this.pos += n;
    return { buf: this.buf, offset };
  }

  /** A copy of what was written: the writer can be reused at once. */
  finish(): Uint8Array<ArrayBuffer> {
    return this.buf.slice(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
}

export class ByteReader {
  private pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  u16(): number {
    this.need(2);
    const v = this.buf[this.pos]! | (this.buf[this.pos + 1]! << 8);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    let v = 0;
    for (let i = 3; i >= 0; i--) v = v * 256 + this.buf[this.pos + i]!;
    this.pos += 4;
    return v;
  }

  varint(): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * scale;
      // Eight groups hold 56 bits; past 2^53 the sum is rounded, a value the writer refuses.
      if (b < 0x80 && v > Number.MAX_SAFE_INTEGER) throw new WireError('netcode: varint out of range');
      if (b < 0x80) return v;
      scale *= 0x80;
    }
    throw new WireError('netcode: varint longer than 8 bytes');
  }

  svarint(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  /** A view (not a copy) of the next n bytes. */
  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new WireError('netcode: packet truncated');
  }
}
