import { ProtocolError } from './errors.js';

// A port of protocol/check.go. It runs before the msgpack decoder sees a
// frame: every declared length must fit in the bytes present, containers nest
// at most maxDepth deep and extension types are refused, so no frame can make
// the decoder allocate more than its own size or recurse without bound.

/** Throws unless `b` holds exactly one well-formed, bounded MessagePack value. */
export function checkMsgpack(b: Uint8Array, maxDepth: number): void {
  const end = checkValue(b, 0, maxDepth);
  if (end !== b.length) throw malformed(`${b.length - end} trailing bytes`);
}

function malformed(why: string): ProtocolError {
  return new ProtocolError('malformed', `malformed msgpack: ${why}`);
}

function checkValue(b: Uint8Array, at: number, depthLeft: number): number {
  const c = b[at];
  if (c === undefined) throw malformed(`truncated at byte ${at}`);
  let off = at + 1;
  if (c <= 0x7f || c >= 0xe0) return off; // fixint
  if (c <= 0x8f) return checkContainer(b, off, c & 0x0f, 2, depthLeft); // fixmap
  if (c <= 0x9f) return checkContainer(b, off, c & 0x0f, 1, depthLeft); // fixarray
  if (c <= 0xbf) return skip(b, off, c & 0x1f); // fixstr
  let n: number;
  switch (c) {
    case 0xc0: // nil
    case 0xc2: // false
    case 0xc3: // true
      return off;
    case 0xcc:
    case 0xd0:
      return skip(b, off, 1);
    case 0xcd:
    case 0xd1:
      return skip(b, off, 2);
    case 0xca:
    case 0xce:
    case 0xd2:
      return skip(b, off, 4);
    case 0xcb:
    case 0xcf:
    case 0xd3:
      return skip(b, off, 8);
    case 0xc4: // bin8
    case 0xd9: // str8
      [n, off] = readLen(b, off, 1);
      return skip(b, off, n);
    case 0xc5: // bin16
    case 0xda: // str16
      [n, off] = readLen(b, off, 2);
      return skip(b, off, n);
    case 0xc6: // bin32
    case 0xdb: // str32
      [n, off] = readLen(b, off, 4);
      return skip(b, off, n);
    case 0xdc: // array16
    case 0xde: // map16
      [n, off] = readLen(b, off, 2);
      return checkContainer(b, off, n, c === 0xde ? 2 : 1, depthLeft);
    case 0xdd: // array32
    case 0xdf: // map32
      [n, off] = readLen(b, off, 4);
      return checkContainer(b, off, n, c === 0xdf ? 2 : 1, depthLeft);
    case 0xc1:
      throw malformed(`reserved byte 0xc1 at ${at}`);
    default: // 0xc7-0xc9, 0xd4-0xd8: extensions
      throw malformed(`extension type 0x${c.toString(16)} at ${at} not allowed`);
  }
}

function checkContainer(b: Uint8Array, off: number, n: number, per: number, depthLeft: number): number {
  if (depthLeft <= 0) throw new ProtocolError('too_deep', 'nesting too deep');
  // Every element takes at least one byte: refuse counts the bytes cannot hold.
  if (n * per > b.length - off) throw malformed(`container of ${n} elements in ${b.length - off} bytes`);
  for (let i = 0; i < n * per; i++) off = checkValue(b, off, depthLeft - 1);
  return off;
}

function readLen(b: Uint8Array, off: number, size: 1 | 2 | 4): [number, number] {
  if (b.length - off < size) throw malformed(`truncated length at byte ${off}`);
  const view = new DataView(b.buffer, b.byteOffset + off, size);
  const n = size === 1 ? view.getUint8(0) : size === 2 ? view.getUint16(0) : view.getUint32(0);
  return [n, off + size];
}

function skip(b: Uint8Array, off: number, n: number): number {
  if (n > b.length - off) throw malformed(`${n} bytes declared, ${b.length - off} present`);
  return off + n;
}
