// A simple bot: get behind the ball on the line to the other goal, then
// push and kick. It plays through the same input path as a person (it only
// looks at what this tab draws), so it is how tests and idle tabs play.
import { KICK_REACH } from './physics';
import { ARENA_H, ARENA_W, PLAYER_R, type ArenaInput } from './schema';

export interface PilotView {
  me: { x: number; y: number; team: number } | null;
  ball: { x: number; y: number } | null;
}

const DEAD_ZONE = 6;

export function autopilot(v: PilotView): ArenaInput {
  const none: ArenaInput = { up: false, down: false, left: false, right: false, kick: false };
  if (!v.me || !v.ball) return none;
  const goalX = v.me.team === 0 ? ARENA_W : 0;
  const goalY = ARENA_H / 2;
  // Aim at a point just behind the ball, as seen from the goal we attack.
  const gx = goalX - v.ball.x;
  const gy = goalY - v.ball.y;
  const g = Math.hypot(gx, gy) || 1;
  const behind = { x: v.ball.x - (gx / g) * (PLAYER_R + 6), y: v.ball.y - (gy / g) * (PLAYER_R + 6) };
  const toBall = Math.hypot(v.ball.x - v.me.x, v.ball.y - v.me.y);
  const target = toBall < KICK_REACH + 8 ? v.ball : behind;
  const dx = target.x - v.me.x;
  const dy = target.y - v.me.y;
  return {
    left: dx < -DEAD_ZONE,
    right: dx > DEAD_ZONE,
    up: dy < -DEAD_ZONE,
    down: dy > DEAD_ZONE,
    kick: toBall < KICK_REACH,
  };
}
