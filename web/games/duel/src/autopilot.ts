// A bot for one side: run to the far side of the ball from the goal it
// attacks, and kick when close. Reads only the deterministic state, so it
// is an input source like the keyboard (tests and the Autopilot box use it).
import { BALL, FP, PITCH_H, PITCH_W, type DuelInput, type DuelState } from './sim';

const NEAR = 4 * FP;

export function autopilot(s: DuelState, slot: number): DuelInput {
  const v = s.v;
  const me = 4 * slot;
  // Slot 0 attacks the right goal, slot 1 the left.
  const goalX = (slot === 0 ? PITCH_W : 0) * FP;
  const goalY = (PITCH_H / 2) * FP;
  const bx = v[BALL]!;
  const by = v[BALL + 1]!;
  // Stand behind the ball on the line from the goal through it.
  const gx = bx - goalX;
  const gy = by - goalY;
  const len = Math.max(1, Math.abs(gx) + Math.abs(gy));
  const tx = bx + Math.trunc((gx * 20 * FP) / len);
  const ty = by + Math.trunc((gy * 20 * FP) / len);
  const behind = slot === 0 ? v[me]! < bx : v[me]! > bx;
  const aimX = behind ? bx : tx;
  const aimY = behind ? by : ty;
  const dx = aimX - v[me]!;
  const dy = aimY - v[me + 1]!;
  return {
    left: dx < -NEAR,
    right: dx > NEAR,
    up: dy < -NEAR,
    down: dy > NEAR,
    kick: behind && Math.abs(bx - v[me]!) + Math.abs(by - v[me + 1]!) < 30 * FP,
  };
}
