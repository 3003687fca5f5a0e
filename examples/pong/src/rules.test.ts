import type { Entity } from '@hostrelay/netcode';
import { describe, expect, it } from 'vitest';
import {
  BALL_ID,
  BALL_R,
  BOARD_ID,
  H,
  inputCodec,
  Match,
  MAX_BALL_SPEED,
  movePaddle,
  OVER_TICKS,
  PADDLE_H,
  PADDLE_INSET,
  PADDLE_SPEED,
  PADDLE_W,
  Phase,
  POINTS_TO_WIN,
  schema,
  SERVE_TICKS,
  stepBall,
  W,
  type Field,
  type PongInput,
} from './rules';

const dt = 1 / 60;
const keys = (up: boolean, down: boolean): PongInput => ({ up, down, aim: null });
const aimAt = (aim: number): PongInput => ({ up: false, down: false, aim });
const paddle = (side: 'left' | 'right', y = H / 2): Entity<Field> => ({ ...schema.blank(), x: side === 'left' ? PADDLE_INSET : W - PADDLE_INSET, y });
const ball = (x: number, y: number, vx: number, vy: number): Entity<Field> => ({ ...schema.blank(), x, y, vx, vy });

describe('paddles', () => {
  it('move at PADDLE_SPEED with the keys and stay inside the field', () => {
    const p = paddle('left');
    movePaddle(p, keys(true, false), dt);
    expect(p.y).toBe(H / 2 - PADDLE_SPEED * dt);
    movePaddle(p, keys(true, true), dt); // both keys: no move
    expect(p.y).toBe(H / 2 - PADDLE_SPEED * dt);
    for (let i = 0; i < 100; i++) movePaddle(p, keys(true, false), dt);
    expect(p.y).toBe(PADDLE_H / 2);
    for (let i = 0; i < 100; i++) movePaddle(p, keys(false, true), dt);
    expect(p.y).toBe(H - PADDLE_H / 2);
  });

  it('go to an aim no faster than PADDLE_SPEED, stop on it, and never past the walls', () => {
    const p = paddle('right');
    movePaddle(p, aimAt(H / 2 + 4), dt);
    expect(p.y).toBe(H / 2 + 4); // within one tick's reach: lands on it
    movePaddle(p, aimAt(0), dt);
    expect(p.y).toBe(H / 2 + 4 - PADDLE_SPEED * dt);
    for (let i = 0; i < 100; i++) movePaddle(p, aimAt(0), dt);
    expect(p.y).toBe(PADDLE_H / 2);
  });
});

describe('the ball', () => {
  it('bounces off the top and bottom walls', () => {
    const b = ball(W / 2, BALL_R + 1, 0, -300);
    stepBall(b, [], dt);
    expect(b.vy).toBe(300);
    expect(b.y).toBeGreaterThanOrEqual(BALL_R);
    const c = ball(W / 2, H - BALL_R - 1, 0, 300);
    stepBall(c, [], dt);
    expect(c.vy).toBe(-300);
    expect(c.y).toBeLessThanOrEqual(H - BALL_R);
  });

  it('bounces off a paddle faster, steeper the further from its centre it hits', () => {
    const left = paddle('left');
    const face = left.x + PADDLE_W / 2;
    const centre = ball(face + BALL_R + 2, left.y, -400, 0);
    expect(stepBall(centre, [left], dt)).toBeNull();
    expect(centre.vx).toBeGreaterThan(400);
    expect(centre.vy).toBeCloseTo(0);
    expect(centre.x).toBe(face + BALL_R);

    const low = ball(face + BALL_R + 2, left.y + PADDLE_H / 3, -400, 0);
    stepBall(low, [left], dt);
    expect(low.vx).toBeGreaterThan(0);
    expect(low.vy).toBeGreaterThan(100); // hit below the centre: goes down

    const right = paddle('right');
    const high = ball(right.x - PADDLE_W / 2 - BALL_R - 2, right.y - PADDLE_H / 3, 400, 0);
    stepBall(high, [right], dt);
    expect(high.vx).toBeLessThan(0);
    expect(high.vy).toBeLessThan(-100);
  });

  it('never goes faster than MAX_BALL_SPEED', () => {
    const left = paddle('left');
    const b = ball(left.x + PADDLE_W / 2 + BALL_R + 1, left.y, -MAX_BALL_SPEED, 0);
    stepBall(b, [left], dt);
    expect(Math.hypot(b.vx, b.vy)).toBeCloseTo(MAX_BALL_SPEED);
  });

  it('cannot pass through a paddle at full speed, wherever a tick lands it', () => {
    const left = paddle('left');
    const step = MAX_BALL_SPEED * dt;
    for (let start = 0; start < step; start += 0.5) {
      const b = ball(left.x + PADDLE_W / 2 + BALL_R + 1 + start, left.y, -MAX_BALL_SPEED, 0);
      let scored = null;
      for (let i = 0; i < 5 && b.vx < 0; i++) scored = stepBall(b, [left], dt);
      expect(scored).toBeNull();
      expect(b.vx).toBeGreaterThan(0);
    }
  });

  it('scores for the other side when a paddle misses', () => {
    const left = paddle('left', PADDLE_H / 2); // at the top, the ball comes low
    const b = ball(60, H - 60, -600, 0);
    let scored = null;
    for (let i = 0; i < 20 && !scored; i++) scored = stepBall(b, [left], dt);
    expect(scored).toBe('right');
    const right = paddle('right', H - PADDLE_H / 2);
    const c = ball(W - 60, 60, 600, 0);
    scored = null;
    for (let i = 0; i < 20 && !scored; i++) scored = stepBall(c, [right], dt);
    expect(scored).toBe('left');
  });
});

describe('the input on the wire', () => {
  it('round-trips keys and aims in three bytes', () => {
    const buf = new Uint8Array(inputCodec.size);
    for (const input of [keys(true, false), keys(false, true), aimAt(0), aimAt(123), aimAt(H), inputCodec.neutral]) {
      inputCodec.write(input, buf, 0);
      expect(inputCodec.equals(inputCodec.read(buf, 0), input)).toBe(true);
    }
    inputCodec.write(aimAt(9999), buf, 0); // off the field: clamped
    expect(inputCodec.read(buf, 0).aim).toBe(H);
  });

  it('reads any bytes a client may send as an input inside the field', () => {
    const buf = new Uint8Array(3);
    for (let hi = 0; hi < 256; hi += 5) {
      buf.set([0xff, hi, 0xff]);
      const input = inputCodec.read(buf, 0);
      expect(input.aim === null || (input.aim >= 0 && input.aim <= H)).toBe(true);
    }
    expect(inputCodec.read(new Uint8Array(0), 0)).toEqual(inputCodec.neutral);
  });
});

describe('a match', () => {
  const board = (m: Match): Entity<Field> => new Map(m.entities()).get(BOARD_ID)!;
  const run = (m: Match, ticks: number, inputs = new Map<string, PongInput>()): void => {
    for (let i = 0; i < ticks; i++) m.step(inputs, dt);
  };

  it('waits for a second player, then the first two play and the rest watch', () => {
    const m = new Match();
    m.join('host', 0);
    expect(m.phase).toBe(Phase.Waiting);
    run(m, SERVE_TICKS * 2);
    expect(m.ball.vx).toBe(0);
    m.join('grace', 1);
    m.join('alan', 2);
    expect([m.sideOf('host'), m.sideOf('grace'), m.sideOf('alan')]).toEqual(['left', 'right', null]);
    expect(m.entities().map(([id]) => id)).toEqual([0, 1, BALL_ID, BOARD_ID]);
    run(m, SERVE_TICKS);
    expect(m.phase).toBe(Phase.Play);
    expect(m.ball.vx).not.toBe(0);
    // A watcher's input moves nothing.
    run(m, 10, new Map([['alan', keys(true, false)]]));
    expect(m.entities().filter(([id]) => id < 256).map(([, e]) => e.y)).toEqual([H / 2, H / 2]);
  });

  it('gives a free paddle to the first watcher, and waits again when nobody is left to play', () => {
    const m = new Match();
    m.join('host', 0);
    m.join('grace', 1);
    m.join('alan', 2);
    m.leave('grace');
    expect(m.sideOf('alan')).toBe('right');
    expect(m.phase).toBe(Phase.Serve);
    m.leave('alan');
    expect(m.phase).toBe(Phase.Waiting);
    expect(m.entities().map(([id]) => id)).toEqual([0, BALL_ID, BOARD_ID]);
  });

  it('counts points, and starts over after someone wins', () => {
    const m = new Match();
    m.join('host', 0);
    m.join('grace', 1);
    // Both paddles at the top: every serve goes past them.
    const up = new Map([
      ['host', keys(true, false)],
      ['grace', keys(true, false)],
    ]);
    let points = 0;
    for (let i = 0; i < 60 * 60 && m.phase !== Phase.Over; i++) {
      m.step(up, dt);
      const b = board(m);
      if (b.scoreL + b.scoreR > points) {
        points = b.scoreL + b.scoreR;
        expect(m.ball).toMatchObject({ x: W / 2, y: H / 2, vx: 0, vy: 0 }); // back in the middle for the next serve
      }
    }
    expect(m.phase).toBe(Phase.Over);
    expect(Math.max(m.scoreL, m.scoreR)).toBe(POINTS_TO_WIN);
    expect(m.scoreL + m.scoreR).toBe(points);
    run(m, OVER_TICKS, up);
    expect([m.phase, m.scoreL, m.scoreR]).toEqual([Phase.Serve, 0, 0]);
  });

  it('keeps its entities rounded as the wire rounds them', () => {
    const m = new Match();
    m.join('host', 0);
    m.join('grace', 1);
    run(m, SERVE_TICKS + 37, new Map([['grace', aimAt(101)]]));
    for (const [, e] of m.entities()) expect(schema.equal(e, schema.quantize(schema.copy(e)))).toBe(true);
  });
});
