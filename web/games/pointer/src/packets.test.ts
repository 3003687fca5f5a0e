import { describe, expect, it } from 'vitest';
import { PacketKind, decodePacket, echoOf, encodePacket } from './packets';
import { RttWindow } from './rtt';

describe('demo packets', () => {
  it('round-trips a pointer packet in 17 bytes', () => {
    const bytes = encodePacket({ kind: PacketKind.Pointer, seq: 7, x: 0.25, y: 1, sentAt: 1234.5 });
    expect(bytes.byteLength).toBe(17);
    const p = decodePacket(bytes);
    expect(p).toMatchObject({ kind: PacketKind.Pointer, seq: 7, y: 1, sentAt: 1234.5 });
    expect(p && 'x' in p ? p.x : -1).toBeCloseTo(0.25, 4);
  });

  it('echoes with the kind flipped and the rest intact', () => {
    const bytes = encodePacket({ kind: PacketKind.Pointer, seq: 1, x: 0.5, y: 0.5, sentAt: 99 });
    expect(decodePacket(echoOf(bytes))).toMatchObject({ kind: PacketKind.Echo, seq: 1, sentAt: 99 });
    expect(decodePacket(bytes)?.kind).toBe(PacketKind.Pointer);
  });

  it('round-trips a test packet and refuses junk', () => {
    expect(decodePacket(encodePacket({ kind: PacketKind.Test, seq: 42 }))).toEqual({ kind: PacketKind.Test, seq: 42 });
    expect(decodePacket('hello')).toBeNull();
    expect(decodePacket(new ArrayBuffer(0))).toBeNull();
    expect(decodePacket(new Uint8Array([PacketKind.Pointer, 0, 0]).buffer)).toBeNull();
    expect(decodePacket(new Uint8Array([9, 0, 0, 0, 0]).buffer)).toBeNull();
  });
});

describe('RttWindow', () => {
  it('reports the median of the last samples', () => {
    const w = new RttWindow(3);
    expect(w.median()).toBeNull();
    w.add(10);
    w.add(1);
    expect(w.median()).toBe(5.5);
    w.add(2);
    w.add(3); // drops 10
    expect(w.median()).toBe(2);
  });
});
