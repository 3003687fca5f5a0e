// The arena's rules. movePlayer is the one piece clients run too (to predict
// themselves), so it depends on nothing but its arguments.
import type { Entity } from '@hostrelay/netcode';
import { ARENA_H, ARENA_W, BALL_R, GOAL_H, PLAYER_R, type ArenaInput, type Field } from './schema';

export const PLAYER_MAX_SPEED = 260; // px/s
const PLAYER_ACCEL = 2000;
const PLAYER_FRICTION = 6; // 1/s
/** Below this a body is at rest: rounding would otherwise leave it creeping forever. */
const REST = 1;

const BALL_FRICTION = 0.9; // 1/s
/**
 * The ball's friction takes 1.5 % of its speed per tick; below ~2 px/s that
 * is less than the 1/32 px/s rounding step and the ball would creep forever
 * (and cost bandwidth forever), so it stops under 5 px/s.
 */
const BALL_REST = 5;
const BALL_MAX_SPEED = 900;
const WALL_BOUNCE = 0.85;
const PLAYER_BOUNCE = 0.5;
export const KICK_SPEED = 520;
export const KICK_REACH = PLAYER_R + BALL_R + 14;
/** Ticks after a kick before the same player can kick again. */
export const KICK_COOLDOWN_TICKS = 18;

/** One tick of a player's own movement: acceleration, friction, speed cap, walls. */
export function movePlayer(e: Entity<Field>, input: ArenaInput, dt: number): void {
  const ax = (input.right ? 1 : 0) - (input.left ? 1 : 0);
  const ay = (input.down ? 1 : 0) - (input.up ? 1 : 0);
  const norm = ax !== 0 && ay !== 0 ? Math.SQRT1_2 : 1;
  e.vx += ax * norm * PLAYER_ACCEL * dt - e.vx * PLAYER_FRICTION * dt;
  e.vy += ay * norm * PLAYER_ACCEL * dt - e.vy * PLAYER_FRICTION * dt;
  const speed = Math.hypot(e.vx, e.vy);
  if (speed > PLAYER_MAX_SPEED) {
    e.vx *= PLAYER_MAX_SPEED / speed;
    e.vy *= PLAYER_MAX_SPEED / speed;
  } else if (speed < REST && ax === 0 && ay === 0) {
    e.vx = 0;
    e.vy = 0;
  }
  e.x += e.vx * dt;
  e.y += e.vy * dt;
  keepInside(e, PLAYER_R);
}

function keepInside(e: Entity<Field>, r: number): void {
  if (e.x < r || e.x > ARENA_W - r) {
    e.x = Math.min(ARENA_W - r, Math.max(r, e.x));
    e.vx = 0;
  }
  if (e.y < r || e.y > ARENA_H - r) {
    e.y = Math.min(ARENA_H - r, Math.max(r, e.y));
    e.vy = 0;
  }
}

/** Pushes two overlapping players apart, half each, and stops them closing. */
export function separatePlayers(a: Entity<Field>, b: Entity<Field>): boolean {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const d = Math.hypot(dx, dy);
  if (d >= 2 * PLAYER_R) return false;
  const nx = d > 0 ? dx / d : 1;
  const ny = d > 0 ? dy / d : 0;
  const push = (2 * PLAYER_R - d) / 2;
  a.x -= nx * push;
  a.y -= ny * push;
  b.x += nx * push;
  b.y += ny * push;
  const closing = (b.vx - a.vx) * nx + (b.vy - a.vy) * ny;
  if (closing < 0) {
    // Equal masses: swap the closing part of the velocity, halved.
    const j = closing / 2;
    a.vx += nx * j;
    a.vy += ny * j;
    b.vx -= nx * j;
    b.vy -= ny * j;
  }
  keepInside(a, PLAYER_R);
  keepInside(b, PLAYER_R);
  return true;
}

/** The ball bounces off a player as off a moving wall: the player does not feel it (so prediction stays exact). */
export function bounceBallOffPlayer(ball: Entity<Field>, p: Readonly<Entity<Field>>): boolean {
  const dx = ball.x - p.x;
  const dy = ball.y - p.y;
  const d = Math.hypot(dx, dy);
  const min = PLAYER_R + BALL_R;
  if (d >= min) return false;
  const nx = d > 0 ? dx / d : 1;
  const ny = d > 0 ? dy / d : 0;
  ball.x = p.x + nx * min;
  ball.y = p.y + ny * min;
  const rel = (ball.vx - p.vx) * nx + (ball.vy - p.vy) * ny;
  if (rel < 0) {
    ball.vx -= (1 + PLAYER_BOUNCE) * rel * nx;
    ball.vy -= (1 + PLAYER_BOUNCE) * rel * ny;
  }
  capBall(ball);
  return true;
}

/** A kick sends the ball away from the kicker if it is in reach. */
export function kickBall(ball: Entity<Field>, p: Readonly<Entity<Field>>): boolean {
  const dx = ball.x - p.x;
  const dy = ball.y - p.y;
  const d = Math.hypot(dx, dy);
  if (d > KICK_REACH || d === 0) return false;
  ball.vx = (dx / d) * KICK_SPEED + p.vx * 0.5;
  ball.vy = (dy / d) * KICK_SPEED + p.vy * 0.5;
  capBall(ball);
  return true;
}

export type Goal = 'left' | 'right' | null;

/**
 * The ball's part of a tick once the players have moved and kicked: it
 * rolls, then bounces off every player it touches. The host runs it with
 * every player; a client predicting the ball with its own player and the
 * others where it draws them.
 */
export function rollBall(ball: Entity<Field>, dt: number, players: Iterable<Readonly<Entity<Field>>>): Goal {
  const goal = moveBall(ball, dt);
  for (const p of players) bounceBallOffPlayer(ball, p);
  return goal;
}

/** Moves the ball one tick; returns which goal it went into, if any. */
export function moveBall(ball: Entity<Field>, dt: number): Goal {
  ball.vx -= ball.vx * BALL_FRICTION * dt;
  ball.vy -= ball.vy * BALL_FRICTION * dt;
  if (Math.hypot(ball.vx, ball.vy) < BALL_REST) {
    ball.vx = 0;
    ball.vy = 0;
  }
  ball.x += ball.vx * dt;
  ball.y += ball.vy * dt;
  const inMouth = Math.abs(ball.y - ARENA_H / 2) < GOAL_H / 2 - BALL_R;
  if (ball.x < BALL_R) {
    if (inMouth) return 'left';
    ball.x = BALL_R;
    ball.vx = -ball.vx * WALL_BOUNCE;
  } else if (ball.x > ARENA_W - BALL_R) {
    if (inMouth) return 'right';
    ball.x = ARENA_W - BALL_R;
    ball.vx = -ball.vx * WALL_BOUNCE;
  }
  if (ball.y < BALL_R) {
    ball.y = BALL_R;
    ball.vy = -ball.vy * WALL_BOUNCE;
  } else if (ball.y > ARENA_H - BALL_R) {
    ball.y = ARENA_H - BALL_R;
    ball.vy = -ball.vy * WALL_BOUNCE;
  }
  return null;
}

function capBall(ball: Entity<Field>): void {
  const s = Math.hypot(ball.vx, ball.vy);
  if (s > BALL_MAX_SPEED) {
    ball.vx *= BALL_MAX_SPEED / s;
    ball.vy *= BALL_MAX_SPEED / s;
  }
}
