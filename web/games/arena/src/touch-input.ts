// The arena's touch input, without the DOM: where the thumbs are on the
// on-screen stick and the Kick button, turned into the same ArenaInput the
// keyboard gives. touch-controls.ts feeds it Pointer Events; the tests feed
// it numbers.
import type { ArenaInput } from './schema';

/** The stick's size in CSS pixels. */
export interface StickSize {
  /** How far the knob travels from the base: the rim. Past it the base follows the thumb. */
  readonly radius: number;
  /** A thumb this close to where it landed does not move the player (a resting thumb wobbles). */
  readonly deadZone: number;
}

/** A rim within reach of a thumb on a phone; a dead zone a quarter of it. */
export const STICK: StickSize = { radius: 48, deadZone: 12 };

export interface Point {
  readonly x: number;
  readonly y: number;
}

export type Direction = Pick<ArenaInput, 'up' | 'down' | 'left' | 'right'>;

const NONE: Direction = { up: false, down: false, left: false, right: false };

/**
 * sin 22.5°: a component at least this share of the offset switches its
 * axis on, which cuts the circle into 8 equal sectors of 45°. ArenaInput is
 * four buttons (movePlayer normalises diagonals), so 8 directions is all
 * the stick can say; an analog stick would promise what the wire drops.
 */
const AXIS_ON = Math.sin(Math.PI / 8);

/**
 * The direction the thumb at offset (dx, dy) from the stick's base points
 * in, screen axes (y down). Nothing inside the dead zone; at and past the
 * rim the same as on it, since only the angle counts.
 */
export function stickDirection(dx: number, dy: number, size: StickSize = STICK): Direction {
  const d = Math.hypot(dx, dy);
  if (!(d > size.deadZone)) return NONE; // also NaN
  const on = AXIS_ON * d;
  return { up: dy <= -on, down: dy >= on, left: dx <= -on, right: dx >= on };
}

/** Where the knob is drawn, relative to the base: under the thumb, but never past the rim. */
export function knobOffset(dx: number, dy: number, size: StickSize = STICK): Point {
  const d = Math.hypot(dx, dy);
  if (d <= size.radius || d === 0) return { x: dx, y: dy };
  const k = size.radius / d;
  return { x: dx * k, y: dy * k };
}

/**
 * The stick's base once the thumb is at `thumb`: where it was while the thumb
 * stays within the rim, else dragged along so the thumb is on the rim. A
 * thumb that overshot to the right then needs to move back only past the
 * rim's other side to go left, not all the way back to where it landed.
 */
export function followBase(base: Point, thumb: Point, size: StickSize = STICK): Point {
  const dx = thumb.x - base.x;
  const dy = thumb.y - base.y;
  const d = Math.hypot(dx, dy);
  if (d <= size.radius) return base;
  const k = size.radius / d;
  return { x: thumb.x - dx * k, y: thumb.y - dy * k };
}

/** Either source pressing a button presses it: keyboard and touch both move the player. */
export function mergeInputs(a: ArenaInput, b: ArenaInput): ArenaInput {
  return { up: a.up || b.up, down: a.down || b.down, left: a.left || b.left, right: a.right || b.right, kick: a.kick || b.kick };
}

/** What touch-controls.ts draws: the base where the thumb landed and the knob under it. */
export interface StickView {
  readonly base: Point;
  readonly knob: Point;
}

/**
 * The thumbs on the controls, by Pointer Events' pointerId, so the stick and
 * Kick work at once: one finger steers, the other kicks. The stick follows
 * the first finger that lands on it (a second finger there is ignored, not
 * a jump); Kick is held while any finger is on it.
 */
export class TouchInput {
  private stick: { id: number; base: Point; thumb: Point } | null = null;
  private readonly kickers = new Set<number>();
  /**
   * A tap shorter than a tick (a quick thumb, or a test's touchStart and
   * touchEnd back to back) still kicks: the press is kept until read() has
   * seen it once.
   */
  private kickLatched = false;

  constructor(private readonly size: StickSize = STICK) {}

  /** A finger landed on the stick's area; returns whether the stick took it. */
  stickDown(id: number, at: Point): boolean {
    if (this.stick) return false;
    this.stick = { id, base: at, thumb: at };
    return true;
  }

  stickMove(id: number, at: Point): void {
    if (this.stick?.id !== id) return;
    this.stick = { id, base: followBase(this.stick.base, at, this.size), thumb: at };
  }

  /** The finger lifted, or the browser took it (pointercancel): the stick centres. */
  stickUp(id: number): void {
    if (this.stick?.id === id) this.stick = null;
  }

  kickDown(id: number): void {
    this.kickers.add(id);
    this.kickLatched = true;
  }

  kickUp(id: number): void {
    this.kickers.delete(id);
  }

  /** Every finger gone (the page was hidden, the controls were hidden): nothing stays pressed. */
  releaseAll(): void {
    this.stick = null;
    this.kickers.clear();
    this.kickLatched = false;
  }

  /** The stick's base and knob while a finger is on it, null while it rests. */
  get view(): StickView | null {
    const s = this.stick;
    if (!s) return null;
    return { base: s.base, knob: knobOffset(s.thumb.x - s.base.x, s.thumb.y - s.base.y, this.size) };
  }

  get kicking(): boolean {
    return this.kickers.size > 0;
  }

  /** The input for this tick; a Kick tapped since the last read counts once. */
  read(): ArenaInput {
    const s = this.stick;
    const dir = s ? stickDirection(s.thumb.x - s.base.x, s.thumb.y - s.base.y, this.size) : NONE;
    const kick = this.kickers.size > 0 || this.kickLatched;
    this.kickLatched = false;
    return { ...dir, kick };
  }
}
