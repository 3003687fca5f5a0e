// A simple bot: get behind the ball on the line to the other goal, then
// push and kick. It plays through the same input path as a person (it only
// looks at what this tab draws), so it is how tests and idle tabs play.
import { KICK_REACH } from './physics';
import { ARENA_H, ARENA_W, BALL_R, PLAYER_R, type ArenaInput } from './schema';

export interface PilotView {
  me: { x: number; y: number; team: number } | null;
  ball: { x: number; y: number } | null;
}

const DEAD_ZONE = 6;

export function autopilot(v: PilotView): ArenaInput {
  const none: ArenaInput = { up: false, down: false, left: false, right: false, kick: false };
  if (!v.me || !v.ball) return none;
  const { me, ball } = v;
  // The goal we attack, and the unit vector from the ball towards it.
  const gx = (me.team === 0 ? ARENA_W : 0) - ball.x;
  const gy = ARENA_H / 2 - ball.y;
  const g = Math.hypot(gx, gy) || 1;
  const ux = gx / g;
  const uy = gy / g;
  const toBall = Math.hypot(ball.x - me.x, ball.y - me.y) || 1;
  // Behind the ball: the ball lies between us and the goal we attack.
  const behind = ((ball.x - me.x) * ux + (ball.y - me.y) * uy) / toBall > 0.6;
  let tx: number;
  let ty: number;
  if (behind) {
    tx = ball.x;
    ty = ball.y;
  } else {
    // Go round the ball, never through it: aim beside it first, then behind it.
    const back = { x: ball.x - ux * (PLAYER_R + BALL_R + 10), y: ball.y - uy * (PLAYER_R + BALL_R + 10) };
    const side = Math.sign((me.x - ball.x) * -uy + (me.y - ball.y) * ux) || 1;
    const clear = 2 * (PLAYER_R + BALL_R);
    const near = toBall < clear * 1.5;
    tx = near ? ball.x - uy * side * clear : back.x;
    ty = near ? ball.y + ux * side * clear : back.y;
  }
  // A point beyond a wall cannot be reached: aim at the nearest one inside.
  tx = Math.min(ARENA_W - PLAYER_R, Math.max(PLAYER_R, tx));
  ty = Math.min(ARENA_H - PLAYER_R, Math.max(PLAYER_R, ty));
  const dx = tx - me.x;
  const dy = ty - me.y;
  // Against a wall there is often no getting behind the ball: kick it out anyway.
  const walled = Math.min(ball.x, ball.y, ARENA_W - ball.x, ARENA_H - ball.y) < PLAYER_R * 2 + BALL_R;
  return {
    left: dx < -DEAD_ZONE,
    right: dx > DEAD_ZONE,
    up: dy < -DEAD_ZONE,
    down: dy > DEAD_ZONE,
    kick: (behind || walled) && toBall < KICK_REACH,
  };
}
