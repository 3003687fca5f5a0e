// The demo's game packets: fixed little-endian layouts in a DataView, the
// way a real game would pack inputs, never JSON.
//
//   pointer / echo: kind u8 | seq u32 | x u16 | y u16 | sentAt f64   (17 bytes)
//   test:           kind u8 | seq u32                                 (5 bytes)
//
// x and y are fractions of the canvas scaled to 0..65535, so they do not
// depend on either side's canvas size. sentAt is the client's
// performance.now(); the host echoes the packet unchanged but for the kind.

export const PacketKind = { Pointer: 1, Echo: 2, Test: 3 } as const;

export interface PointerPacket {
  kind: typeof PacketKind.Pointer | typeof PacketKind.Echo;
  seq: number;
  x: number; // 0..1
  y: number; // 0..1
  sentAt: number;
}

export interface TestPacket {
  kind: typeof PacketKind.Test;
  seq: number;
}

export type Packet = PointerPacket | TestPacket;

const POINTER_SIZE = 17;
const TEST_SIZE = 5;

const toU16 = (f: number): number => Math.round(Math.min(1, Math.max(0, f)) * 0xffff);

export function encodePacket(p: Packet): ArrayBuffer {
  if (p.kind === PacketKind.Test) {
    const view = new DataView(new ArrayBuffer(TEST_SIZE));
    view.setUint8(0, p.kind);
    view.setUint32(1, p.seq >>> 0, true);
    return view.buffer;
  }
  const view = new DataView(new ArrayBuffer(POINTER_SIZE));
  view.setUint8(0, p.kind);
  view.setUint32(1, p.seq >>> 0, true);
  view.setUint16(5, toU16(p.x), true);
  view.setUint16(7, toU16(p.y), true);
  view.setFloat64(9, p.sentAt, true);
  return view.buffer;
}

/** Decodes a packet from a peer; null for anything malformed. */
export function decodePacket(data: ArrayBuffer | string): Packet | null {
  if (typeof data === 'string' || data.byteLength < 1) return null;
  const view = new DataView(data);
  const kind = view.getUint8(0);
  if (kind === PacketKind.Test && data.byteLength === TEST_SIZE) {
    return { kind, seq: view.getUint32(1, true) };
  }
  if ((kind === PacketKind.Pointer || kind === PacketKind.Echo) && data.byteLength === POINTER_SIZE) {
    return {
      kind,
      seq: view.getUint32(1, true),
      x: view.getUint16(5, true) / 0xffff,
      y: view.getUint16(7, true) / 0xffff,
      sentAt: view.getFloat64(9, true),
    };
  }
  return null;
}

/** The host's echo: the same bytes with the kind flipped. */
export function echoOf(data: ArrayBuffer): ArrayBuffer {
  const copy = data.slice(0);
  new DataView(copy).setUint8(0, PacketKind.Echo);
  return copy;
}
