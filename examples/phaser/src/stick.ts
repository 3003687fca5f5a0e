// The virtual joystick's arithmetic, without Phaser: a thumb's offset from
// where it landed, in screen pixels, as a TagInput. scene.ts feeds it
// Phaser's pointers; the unit tests feed it numbers.
import { STICK_MAX, type TagInput } from './rules';

/** How far (CSS pixels) the thumb goes from where it landed for full speed: within a thumb's reach on a phone. */
export const STICK_RADIUS = 56;
/** A thumb this close to where it landed does not move the player (a resting thumb wobbles). */
export const DEAD_ZONE = 6;

/**
 * The input for a thumb at (dx, dy) from the stick's base: the direction of
 * the offset, its size a share of the radius (analog: a short push walks),
 * full at the rim and past it.
 */
export function stickInput(dx: number, dy: number): TagInput {
  const d = Math.hypot(dx, dy);
  if (!(d > DEAD_ZONE)) return { x: 0, y: 0 }; // also NaN
  const k = (STICK_MAX * Math.min(1, d / STICK_RADIUS)) / d;
  return { x: Math.round(dx * k), y: Math.round(dy * k) };
}

/** Where the knob is drawn relative to the base: under the thumb, never past the rim. */
export function knobOffset(dx: number, dy: number): { x: number; y: number } {
  const d = Math.hypot(dx, dy);
  if (d <= STICK_RADIUS) return { x: dx, y: dy };
  return { x: (dx * STICK_RADIUS) / d, y: (dy * STICK_RADIUS) / d };
}

/** Keys held as a full deflection (diagonals too: velocityOf caps the speed). */
export function keysInput(left: boolean, right: boolean, up: boolean, down: boolean): TagInput {
  return { x: (right ? STICK_MAX : 0) - (left ? STICK_MAX : 0), y: (down ? STICK_MAX : 0) - (up ? STICK_MAX : 0) };
}
