import { ByteReader } from '../wire/bytes.js';

type ReadMethod = 'u8' | 'u16' | 'u32' | 'bytes';

/**
 * Counts ByteReader reads until restore(). Every read but bytes(0) takes a
 * byte, and no decoder calls bytes(0) twice in a row, so a decoder that
 * makes more than 2 reads a byte of input is looping on nothing.
 */
export function countByteReads(): { readonly count: number; reset(): void; restore(): void } {
  const proto = ByteReader.prototype as unknown as Record<ReadMethod, (this: ByteReader, ...args: number[]) => unknown>;
  const originals = new Map<ReadMethod, (this: ByteReader, ...args: number[]) => unknown>();
  const counter = {
    count: 0,
    reset(): void {
      counter.count = 0;
    },
    restore(): void {
      for (const [name, f] of originals) proto[name] = f;
    },
  };
  for (const name of ['u8', 'u16', 'u32', 'bytes'] as const) {
    const original = proto[name];
    originals.set(name, original);
    proto[name] = function (this: ByteReader, ...args: number[]): unknown {
      counter.count++;
      return original.apply(this, args);
    };
  }
  return counter;
}
