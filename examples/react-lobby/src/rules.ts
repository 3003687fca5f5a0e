// The game, shared by host and clients: catch the dot. Everyone's pointer is
// on the field; the first click on the dot (as the host sees it) scores,
// and the dot jumps elsewhere. No DOM and no network here, so the unit
// tests run it directly.
import { Schema, type Entity, type InputCodec, type NetGame } from '@hostrelay/netcode';

/** The field in world units; the canvas scales it to fit. */
export const W = 600;
export const H = 400;
export const DOT_R = 28;
/** First to this many catches wins the round; the next round starts at once. */
export const POINTS_TO_WIN = 10;

export const schema = Schema.define({
  x: { precision: 1, snapOver: 100 },
  y: { precision: 1, snapOver: 100 },
  score: { interpolate: 'step' },
});
export type Field = (typeof schema)['fields'][number];

/** Players' pointers use their slot (0–255) as entity id; the dot sits above. */
export const DOT_ID = 1000;

/**
 * Where the pointer is and how many clicks it made so far (mod 256): a
 * count, not a "pressed" flag, so an input sent again (redundancy, or
 * repeated by the host while the next is late) never clicks twice.
 */
export interface DotInput {
  readonly x: number;
  readonly y: number;
  readonly clicks: number;
}

/** Five bytes: x and y as 16-bit numbers, then the click count. Any bytes decode (a hostile client picks them). */
export const inputCodec: InputCodec<DotInput> = {
  size: 5,
  neutral: { x: W / 2, y: H / 2, clicks: 0 },
  write(input, buf, offset) {
    const x = Math.round(Math.min(W, Math.max(0, input.x)));
    const y = Math.round(Math.min(H, Math.max(0, input.y)));
    buf[offset] = x >> 8;
    buf[offset + 1] = x & 0xff;
    buf[offset + 2] = y >> 8;
    buf[offset + 3] = y & 0xff;
    buf[offset + 4] = input.clicks & 0xff;
  },
  read(buf, offset) {
    const x = ((buf[offset] ?? 0) << 8) | (buf[offset + 1] ?? 0);
    const y = ((buf[offset + 2] ?? 0) << 8) | (buf[offset + 3] ?? 0);
    return { x: Math.min(W, x), y: Math.min(H, y), clicks: buf[offset + 4] ?? 0 };
  },
  equals: (a, b) => a.x === b.x && a.y === b.y && a.clicks === b.clicks,
};

export const dotGame: NetGame<DotInput, Field> = { schema, input: inputCodec, tickRate: 30 };

interface Seat {
  readonly slot: number;
  readonly pointer: Entity<Field>;
  clicks: number;
}

/** The host's world: a pointer per player and the dot. */
export class DotMatch {
  private readonly seats = new Map<string, Seat>();
  private readonly dot: Entity<Field> = { x: W / 2, y: H / 2, score: 0 };
  private seed: number;

  /** `seed` picks the dot's places (a match is replayable in tests). */
  constructor(seed = 1) {
    this.seed = seed >>> 0 || 1;
  }

  join(id: string, slot: number): void {
    this.seats.set(id, { slot, pointer: { x: W / 2, y: H / 2, score: 0 }, clicks: -1 });
  }

  leave(id: string): void {
    this.seats.delete(id);
  }

  /** One tick: pointers follow their inputs; a new click on the dot scores and moves it. */
  step(inputs: ReadonlyMap<string, DotInput>): void {
    for (const [id, seat] of this.seats) {
      const input = inputs.get(id);
      if (!input) continue;
      seat.pointer.x = input.x;
      seat.pointer.y = input.y;
      const clicked = seat.clicks !== -1 && input.clicks !== seat.clicks;
      seat.clicks = input.clicks;
      if (clicked && Math.hypot(input.x - this.dot.x, input.y - this.dot.y) <= DOT_R) this.caught(seat);
    }
  }

  /** Every networked entity: the pointers (by slot) and the dot, whose score is the round. */
  capture(): [number, Entity<Field>][] {
    return [...[...this.seats.values()].map((s): [number, Entity<Field>] => [s.slot, s.pointer]), [DOT_ID, this.dot]];
  }

  get dotAt(): { x: number; y: number } {
    return { x: this.dot.x, y: this.dot.y };
  }

  private caught(seat: Seat): void {
    seat.pointer.score++;
    if (seat.pointer.score >= POINTS_TO_WIN) {
      for (const s of this.seats.values()) s.pointer.score = 0;
      this.dot.score++;
    }
    this.dot.x = DOT_R + this.random() * (W - 2 * DOT_R);
    this.dot.y = DOT_R + this.random() * (H - 2 * DOT_R);
  }

  /** xorshift32: small, and the same on every machine. */
  private random(): number {
    let s = this.seed;
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    this.seed = s >>> 0;
    return this.seed / 2 ** 32;
  }
}
