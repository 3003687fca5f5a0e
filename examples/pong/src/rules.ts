// The game itself, shared by host and clients: what goes on the wire (the
// schema and the input), and the rules (paddles, ball, score). No DOM and
// no network here, so the unit tests run it directly.
import { Schema, type Entity, type InputCodec, type NetGame } from '@hostrelay/netcode';

/** The field in world units; the renderer scales (and on a tall screen turns) it to fit. */
export const W = 800;
export const H = 500;
export const PADDLE_H = 90;
export const PADDLE_W = 14;
/** A paddle's centre is this far from its wall. */
export const PADDLE_INSET = 30;
export const PADDLE_SPEED = 600; // units per second: 10 per tick
export const BALL_R = 8;
export const SERVE_SPEED = 360;
export const MAX_BALL_SPEED = 840; // 14 units per tick: less than a paddle is thick plus the ball's radius, so it never tunnels through
const SPEEDUP = 1.06;
const MAX_BOUNCE = Math.PI / 3;
export const POINTS_TO_WIN = 5;
export const SERVE_TICKS = 60; // the ball rests 1 s before each serve
export const OVER_TICKS = 180; // the winner is shown 3 s, then a new match starts

// Every entity has every field; delta compression makes the unused ones free.
// Rounding to 1/16 happens on the host, so the client's prediction of its
// own paddle starts from exactly the host's numbers.
export const schema = Schema.define({
  x: { precision: 1 / 16, snapOver: 200, velocity: 'vx' },
  y: { precision: 1 / 16, snapOver: 200, velocity: 'vy' },
  vx: { precision: 1 / 16 },
  vy: { precision: 1 / 16 },
  scoreL: { interpolate: 'step' },
  scoreR: { interpolate: 'step' },
  phase: { interpolate: 'step' },
});
export type Field = (typeof schema)['fields'][number];

/** Paddles use their player's slot (0–255) as entity id; the ball and the scoreboard sit above. */
export const BALL_ID = 1000;
export const BOARD_ID = 1001;

export const Phase = { Waiting: 0, Serve: 1, Play: 2, Over: 3 } as const;
export type Side = 'left' | 'right';

/**
 * What a player wants, not where their paddle is: keys held, or a point to
 * move to (a finger or the mouse). The host moves the paddle there at
 * PADDLE_SPEED, so no client can teleport.
 */
export interface PongInput {
  readonly up: boolean;
  readonly down: boolean;
  /** A y to move the paddle to, or null. */
  readonly aim: number | null;
}

/** Three bytes: the keys, then aim + 1 as a 16-bit number (0: no aim). */
export const inputCodec: InputCodec<PongInput> = {
  size: 3,
  neutral: { up: false, down: false, aim: null },
  write(input, buf, offset) {
    buf[offset] = (input.up ? 1 : 0) | (input.down ? 2 : 0);
    const aim = input.aim === null ? 0 : Math.round(Math.min(H, Math.max(0, input.aim))) + 1;
    buf[offset + 1] = aim >> 8;
    buf[offset + 2] = aim & 0xff;
  },
  // Any bytes decode: a hostile client chooses them, and movePaddle clamps.
  read(buf, offset) {
    const keys = buf[offset] ?? 0;
    const aim = ((buf[offset + 1] ?? 0) << 8) | (buf[offset + 2] ?? 0);
    return { up: (keys & 1) !== 0, down: (keys & 2) !== 0, aim: aim === 0 ? null : Math.min(H, aim - 1) };
  },
  equals: (a, b) => a.up === b.up && a.down === b.down && a.aim === b.aim,
};

export const pongGame: NetGame<PongInput, Field> = { schema, input: inputCodec, tickRate: 60 };

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/** One tick of a paddle: the host runs it for every player, a client for its own paddle (prediction). */
export function movePaddle(paddle: Entity<Field>, input: PongInput, dt: number): void {
  const step = PADDLE_SPEED * dt;
  const dy = input.aim !== null ? clamp(input.aim - paddle.y, -step, step) : ((input.down ? 1 : 0) - (input.up ? 1 : 0)) * step;
  paddle.y = clamp(paddle.y + dy, PADDLE_H / 2, H - PADDLE_H / 2);
}

/** One tick of the ball: walls, paddles, goals. Returns the side that scored, or null. */
export function stepBall(ball: Entity<Field>, paddles: readonly Readonly<Entity<Field>>[], dt: number): Side | null {
  ball.x += ball.vx * dt;
  ball.y += ball.vy * dt;
  if (ball.y < BALL_R) {
    ball.y = 2 * BALL_R - ball.y;
    ball.vy = Math.abs(ball.vy);
  } else if (ball.y > H - BALL_R) {
    ball.y = 2 * (H - BALL_R) - ball.y;
    ball.vy = -Math.abs(ball.vy);
  }
  for (const p of paddles) {
    const dir = p.x < W / 2 ? 1 : -1; // the way a ball leaves this paddle
    if (Math.sign(ball.vx) === dir) continue;
    const face = p.x + (dir * PADDLE_W) / 2;
    const back = p.x - (dir * PADDLE_W) / 2;
    // The ball's edge has reached the face and its centre is not yet behind the paddle.
    const reached = dir > 0 ? ball.x - BALL_R <= face && ball.x >= back : ball.x + BALL_R >= face && ball.x <= back;
    if (!reached || Math.abs(ball.y - p.y) > PADDLE_H / 2 + BALL_R) continue;
    // Faster after every hit, and steeper the further from the centre it hit.
    const speed = Math.min(MAX_BALL_SPEED, Math.hypot(ball.vx, ball.vy) * SPEEDUP);
    const angle = clamp((ball.y - p.y) / (PADDLE_H / 2 + BALL_R), -1, 1) * MAX_BOUNCE;
    ball.vx = dir * speed * Math.cos(angle);
    ball.vy = speed * Math.sin(angle);
    ball.x = face + dir * BALL_R;
  }
  if (ball.x < -BALL_R) return 'right';
  if (ball.x > W + BALL_R) return 'left';
  return null;
}

interface Seat {
  readonly id: string;
  readonly slot: number;
  readonly paddle: Entity<Field>;
}

const paddleAt = (side: Side): Entity<Field> => ({
  ...schema.blank(),
  x: side === 'left' ? PADDLE_INSET : W - PADDLE_INSET,
  y: H / 2,
});

/**
 * The host's world. The first two players take the left and the right
 * paddle; anyone after them watches, and takes a paddle when one is free.
 */
export class Match {
  readonly ball: Entity<Field> = { ...schema.blank(), x: W / 2, y: H / 2 };
  scoreL = 0;
  scoreR = 0;
  phase: number = Phase.Waiting;
  private timer = 0;
  private serves = 0;
  private readonly seats: Record<Side, Seat | null> = { left: null, right: null };
  /** Players without a paddle, in the order they came. */
  private readonly watching: { id: string; slot: number }[] = [];

  join(id: string, slot: number): void {
    const side = !this.seats.left ? 'left' : !this.seats.right ? 'right' : null;
    if (!side) {
      this.watching.push({ id, slot });
      return;
    }
    this.seats[side] = { id, slot, paddle: paddleAt(side) };
    this.restart();
  }

  leave(id: string): void {
    const w = this.watching.findIndex((p) => p.id === id);
    if (w >= 0) this.watching.splice(w, 1);
    for (const side of ['left', 'right'] as const) {
      if (this.seats[side]?.id !== id) continue;
      const next = this.watching.shift();
      this.seats[side] = next ? { ...next, paddle: paddleAt(side) } : null;
      this.restart();
    }
  }

  sideOf(id: string): Side | null {
    return this.seats.left?.id === id ? 'left' : this.seats.right?.id === id ? 'right' : null;
  }

  /** One tick: every seated player's paddle, then the ball. `inputs` holds everyone's, watchers' too (ignored). */
  step(inputs: ReadonlyMap<string, PongInput>, dt: number): void {
    const paddles: Entity<Field>[] = [];
    for (const seat of [this.seats.left, this.seats.right]) {
      if (!seat) continue;
      movePaddle(seat.paddle, inputs.get(seat.id) ?? inputCodec.neutral, dt);
      paddles.push(seat.paddle);
    }
    if (this.phase === Phase.Serve && --this.timer <= 0) this.serve();
    else if (this.phase === Phase.Over && --this.timer <= 0) this.restart();
    else if (this.phase === Phase.Play) {
      const scorer = stepBall(this.ball, paddles, dt);
      if (scorer) this.point(scorer);
    }
    // Round like the wire does, so the next tick starts from what clients got.
    for (const e of [this.ball, ...paddles]) schema.quantize(e);
  }

  /** Every networked entity: the seated paddles (by slot), the ball, the scoreboard. */
  entities(): [number, Entity<Field>][] {
    const out: [number, Entity<Field>][] = [];
    for (const seat of [this.seats.left, this.seats.right]) if (seat) out.push([seat.slot, seat.paddle]);
    out.push([BALL_ID, this.ball], [BOARD_ID, { ...schema.blank(), scoreL: this.scoreL, scoreR: this.scoreR, phase: this.phase }]);
    return out;
  }

  /** A new match: scores to 0, and a serve if both paddles are taken. */
  private restart(): void {
    this.scoreL = this.scoreR = 0;
    this.rest(this.seats.left && this.seats.right ? Phase.Serve : Phase.Waiting);
  }

  private rest(phase: number): void {
    Object.assign(this.ball, { x: W / 2, y: H / 2, vx: 0, vy: 0 });
    this.phase = phase;
    this.timer = phase === Phase.Over ? OVER_TICKS : SERVE_TICKS;
  }

  /** Alternately to the right and the left, a little up or down. */
  private serve(): void {
    const n = this.serves++;
    const dir = n % 2 === 0 ? 1 : -1;
    const up = n % 4 < 2 ? -1 : 1;
    Object.assign(this.ball, { vx: dir * SERVE_SPEED * Math.cos(0.3), vy: up * SERVE_SPEED * Math.sin(0.3) });
    this.phase = Phase.Play;
  }

  private point(scorer: Side): void {
    if (scorer === 'left') this.scoreL++;
    else this.scoreR++;
    this.rest(Math.max(this.scoreL, this.scoreR) >= POINTS_TO_WIN ? Phase.Over : Phase.Serve);
  }
}
