import { afterAll, beforeAll } from 'vitest';
import { hex, must } from '@hostrelay/fuzz';
import { ByteReader, WireError } from '../wire/bytes.js';

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

/** The one refusal a decoder of peers' bytes may make. */
export const isWireError = (err: unknown): boolean => err instanceof WireError;

/**
 * For a fuzz test file: counts reads for the whole file, and returns a
 * wrapper that runs a decoder with the count at zero and checks it stayed
 * within 2 reads a byte (plus 2), naming the input when it did not.
 */
export function boundedReads(): <T>(decode: (b: Uint8Array) => T) => (b: Uint8Array) => T {
  let counter: ReturnType<typeof countByteReads> | null = null;
  beforeAll(() => {
    counter = countByteReads();
  });
  afterAll(() => counter?.restore());
  return (decode) => (b) => {
    const c = counter!;
    c.reset();
    try {
      return decode(b);
    } finally {
      must(c.count <= 2 * b.length + 2, `${c.count} reads of ${b.length} bytes: ${hex(b)}`);
    }
  };
}
