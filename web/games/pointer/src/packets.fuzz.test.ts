import { describe, expect, it } from 'vitest';
import { below, fuzz, fuzzInputs, hex, must, seededRandom, type Random } from '@hostrelay/fuzz';
import { PacketKind, decodePacket, echoOf, encodePacket, type Packet } from './packets';

// The demo's packets come from other players' tabs: decodePacket must answer
// anything with a packet or null, never throw.

const buffer = (b: Uint8Array): ArrayBuffer => b.slice().buffer;

function randomPacket(rand: Random): Packet {
  const seq = rand() < 0.2 ? 0xffff_ffff : below(rand, 2 ** 32);
  if (rand() < 0.3) return { kind: PacketKind.Test, seq };
  const sentAt = rand() < 0.1 ? [0, -0, Infinity, -1, Number.MAX_VALUE][below(rand, 5)]! : rand() * 1e7;
  return { kind: rand() < 0.5 ? PacketKind.Pointer : PacketKind.Echo, seq, x: rand() * 1.2 - 0.1, y: rand() * 1.2 - 0.1, sentAt };
}

/** What decodePacket must do with `b`, from the layout comment in packets.ts. */
function wellFormed(b: Uint8Array): boolean {
  return (b[0] === PacketKind.Test && b.length === 5) || ((b[0] === PacketKind.Pointer || b[0] === PacketKind.Echo) && b.length === 17);
}

describe('decodePacket under fuzzing', () => {
  it('round-trips random packets, coordinates to 1/65535 of the canvas', () => {
    const rand = seededRandom(901);
    for (let i = 0; i < 3000; i++) {
      const p = randomPacket(rand);
      const got = decodePacket(encodePacket(p));
      must(got !== null && got.kind === p.kind && got.seq === p.seq, `${JSON.stringify(p)} came back as ${JSON.stringify(got)}`);
      if (p.kind === PacketKind.Test || got.kind === PacketKind.Test) continue;
      const clamp = (f: number): number => Math.min(1, Math.max(0, f));
      must(Math.abs(got.x - clamp(p.x)) <= 0.5 / 0xffff && Math.abs(got.y - clamp(p.y)) <= 0.5 / 0xffff, `x, y of ${JSON.stringify(p)}`);
      must(Object.is(got.sentAt, p.sentAt), `sentAt ${p.sentAt}`);
      must(decodePacket(echoOf(encodePacket(p)))?.kind === PacketKind.Echo, 'echo kind');
    }
  });

  it('answers random, mutated and truncated bytes with a packet or null, never a throw', () => {
    const rand = seededRandom(902);
    const valid = Array.from({ length: 20 }, () => new Uint8Array(encodePacket(randomPacket(rand))));
    let accepted = 0;
    const check = (p: Packet | null, input: Uint8Array): void => {
      must((p !== null) === wellFormed(input), `${p === null ? 'refused' : 'accepted'} ${hex(input)}`);
      if (p === null) return;
      accepted++;
      must(Number.isInteger(p.seq) && p.seq >= 0 && p.seq < 2 ** 32, `seq ${p.seq}`);
      if (p.kind !== PacketKind.Test) {
        must(p.x >= 0 && p.x <= 1 && p.y >= 0 && p.y <= 1, `x ${p.x}, y ${p.y}`);
        // Any accepted packet is exactly the bytes its encoding gives (a NaN's payload aside).
        if (Number.isNaN(p.sentAt)) return;
      }
      must(hex(new Uint8Array(encodePacket(p))) === hex(input), `re-encoded ${hex(input)} differently`);
    };
    const tally = fuzz(
      fuzzInputs(rand, valid, { random: 6000, mutations: 8000, firstBytes: [PacketKind.Pointer, PacketKind.Echo, PacketKind.Test] }),
      (b) => decodePacket(buffer(b)),
      () => false,
      check,
    );
    expect(tally.ok).toBeGreaterThan(14000);
    expect(accepted).toBeGreaterThan(1000);
  });

  it('answers strings with null', () => {
    const rand = seededRandom(903);
    for (let i = 0; i < 500; i++) {
      const s = String.fromCharCode(...Array.from({ length: below(rand, 40) }, () => below(rand, 0x10000)));
      must(decodePacket(s) === null, JSON.stringify(s));
    }
  });
});
