/**
 * How a game's input goes on the wire. Fixed size and tiny: a client sends
 * every input several times (redundancy against loss), so a byte saved here
 * is saved five times over.
 */
export interface InputCodec<I> {
  /** Bytes per input. */
  readonly size: number;
  /** Applied for a player before their first input arrives. */
  readonly neutral: I;
  write(input: I, buf: Uint8Array, offset: number): void;
  /** Must accept any bytes without throwing: a hostile client chooses them. */
  read(buf: Uint8Array, offset: number): I;
  /** Runs of equal inputs are sent once with a count. */
  equals(a: I, b: I): boolean;
}

/** An input made of named buttons, each held or not. */
export type Buttons<B extends string> = { readonly [K in B]: boolean };

/**
 * A codec for up to 16 on/off buttons: one byte for up to 8, two for more.
 *
 * @example
 * const codec = buttonsCodec(['up', 'down', 'left', 'right', 'kick'] as const);
 * const input = { up: true, down: false, left: false, right: true, kick: false };
 */
export function buttonsCodec<const B extends string>(names: readonly B[]): InputCodec<Buttons<B>> {
  if (names.length === 0 || names.length > 16) throw new RangeError('netcode: buttonsCodec takes 1–16 buttons');
  const size = names.length > 8 ? 2 : 1;
  const fromBits = (bits: number): Buttons<B> => {
    const out = {} as Record<B, boolean>;
    names.forEach((n, i) => (out[n] = (bits & (1 << i)) !== 0));
    return out;
  };
  return {
    size,
    neutral: fromBits(0),
    write(input, buf, offset) {
      let bits = 0;
      names.forEach((n, i) => {
        if (input[n]) bits |= 1 << i;
      });
      buf[offset] = bits & 0xff;
      if (size === 2) buf[offset + 1] = bits >>> 8;
    },
    read(buf, offset) {
      return fromBits((buf[offset] ?? 0) | (size === 2 ? (buf[offset + 1] ?? 0) << 8 : 0));
    },
    equals(a, b) {
      return names.every((n) => a[n] === b[n]);
    },
  };
}
