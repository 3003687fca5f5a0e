import type { Entity } from '@hostrelay/netcode';
import { describe, expect, it } from 'vitest';
import {
  FREEZE_TICKS,
  H,
  inputCodec,
  IT_SPEED,
  movePlayer,
  nextIt,
  R,
  schema,
  spawnPoint,
  SPEED,
  STICK_MAX,
  touch,
  velocityOf,
  W,
  type Field,
  type Seat,
} from './rules';
import { DEAD_ZONE, keysInput, knobOffset, STICK_RADIUS, stickInput } from './stick';

const player = (fields: Partial<Entity<Field>> = {}): Entity<Field> => ({ ...schema.blank(), x: W / 2, y: H / 2, ...fields });
const DT = 1 / 60;

describe('the input on the wire', () => {
  it('round-trips every stick position in two bytes', () => {
    const buf = new Uint8Array(inputCodec.size);
    for (const x of [-STICK_MAX, -64, -1, 0, 1, 64, STICK_MAX]) {
      for (const y of [-STICK_MAX, 0, 90]) {
        inputCodec.write({ x, y }, buf, 0);
        expect(inputCodec.read(buf, 0)).toEqual({ x, y });
      }
    }
  });

  it('clamps what a client could send: past full deflection, −128, fractions, NaN', () => {
    const buf = new Uint8Array(2);
    inputCodec.write({ x: 1000, y: -1000 }, buf, 0);
    expect(inputCodec.read(buf, 0)).toEqual({ x: STICK_MAX, y: -STICK_MAX });
    inputCodec.write({ x: 2.4, y: Number.NaN }, buf, 0);
    expect(inputCodec.read(buf, 0)).toEqual({ x: 2, y: 0 });
    expect(inputCodec.read(Uint8Array.of(0x80, 0x80), 0)).toEqual({ x: -STICK_MAX, y: -STICK_MAX });
    expect(inputCodec.read(new Uint8Array(0), 0)).toEqual({ x: 0, y: 0 }); // short: neutral
  });
});

describe('running', () => {
  it('goes at SPEED at full deflection, any direction, and no faster on a diagonal', () => {
    expect(velocityOf(player(), { x: STICK_MAX, y: 0 })).toEqual({ vx: SPEED, vy: 0 });
    const d = velocityOf(player(), { x: STICK_MAX, y: STICK_MAX });
    expect(Math.hypot(d.vx, d.vy)).toBeCloseTo(SPEED, 9);
    const half = velocityOf(player(), { x: 0, y: -64 });
    expect(half.vy).toBeCloseTo((-SPEED * 64) / STICK_MAX, 9);
  });

  it('is faster for "it", and nothing while frozen', () => {
    expect(velocityOf(player({ it: 1 }), { x: STICK_MAX, y: 0 }).vx).toBe(IT_SPEED);
    expect(velocityOf(player({ cool: 3 }), { x: STICK_MAX, y: 0 })).toEqual({ vx: 0, vy: 0 });
  });

  it('moves by velocity × dt, the freeze counting down a tick at a time', () => {
    const p = player({ cool: 2 });
    movePlayer(p, { x: STICK_MAX, y: 0 }, DT);
    movePlayer(p, { x: STICK_MAX, y: 0 }, DT);
    expect([p.x, p.cool]).toEqual([W / 2, 0]);
    movePlayer(p, { x: STICK_MAX, y: 0 }, DT);
    expect(p.x).toBeCloseTo(W / 2 + SPEED * DT, 9);
  });

  it('stops at the walls with the circle inside the field', () => {
    const p = player({ x: R + 1, y: H - R - 1 });
    for (let i = 0; i < 10; i++) movePlayer(p, { x: -STICK_MAX, y: STICK_MAX }, DT);
    expect([p.x, p.y]).toEqual([R, H - R]);
    const q = player({ x: W - R - 1, y: R + 1 });
    for (let i = 0; i < 10; i++) movePlayer(q, { x: STICK_MAX, y: -STICK_MAX }, DT);
    expect([q.x, q.y]).toEqual([W - R, R]);
  });
});

describe('tagging', () => {
  const seat = (slot: number, fields: Partial<Entity<Field>> = {}): Seat => ({ slot, entity: player(fields) });

  it('passes "it" on at a touch: the tagged one frozen and barred from tagging back, the tagger scores', () => {
    const [a, b] = [seat(0, { it: 1 }), seat(3)];
    expect(touch(b, a)).toBe(a); // either order
    expect(a.entity).toMatchObject({ it: 0, tags: 1 });
    expect(b.entity).toMatchObject({ it: 1, cool: FREEZE_TICKS, tagger: 1 });
    expect(touch(a, b)).toBeNull(); // frozen
    b.entity.cool = 0;
    expect(touch(a, b)).toBeNull(); // no tag-backs
    const c = seat(5);
    expect(touch(b, c)).toBe(b);
    expect(c.entity).toMatchObject({ it: 1, tagger: 4 });
  });

  it('is no tag between two players of whom neither or both are it', () => {
    expect(touch(seat(0), seat(1))).toBeNull();
    expect(touch(seat(0, { it: 1 }), seat(1, { it: 1 }))).toBeNull();
  });

  it('makes the lowest slot it when nobody is, and nobody in an empty game', () => {
    expect(nextIt([4, 2, 7])).toBe(2);
    expect(nextIt([])).toBeNull();
  });

  it('starts eight players inside the field and apart', () => {
    const points = Array.from({ length: 8 }, (_, s) => spawnPoint(s));
    for (const [i, p] of points.entries()) {
      expect(p.x).toBeGreaterThanOrEqual(R);
      expect(p.y).toBeLessThanOrEqual(H - R);
      for (const q of points.slice(i + 1)) expect(Math.hypot(p.x - q.x, p.y - q.y)).toBeGreaterThan(4 * R);
    }
  });
});

describe('the virtual joystick', () => {
  it('says nothing inside the dead zone, a share of full speed inside the rim, full speed at and past it', () => {
    expect(stickInput(DEAD_ZONE, 0)).toEqual({ x: 0, y: 0 });
    expect(stickInput(Number.NaN, 0)).toEqual({ x: 0, y: 0 });
    expect(stickInput(STICK_RADIUS / 2, 0)).toEqual({ x: 64, y: 0 });
    expect(stickInput(0, -STICK_RADIUS)).toEqual({ x: 0, y: -STICK_MAX });
    expect(stickInput(300, 400)).toEqual({ x: 76, y: 102 }); // the direction (3, 4), full length
  });

  it('draws the knob under the thumb, but never past the rim', () => {
    expect(knobOffset(10, -20)).toEqual({ x: 10, y: -20 });
    expect(knobOffset(STICK_RADIUS * 3, 0)).toEqual({ x: STICK_RADIUS, y: 0 });
  });

  it('turns held keys into full deflections, opposite keys cancelling', () => {
    expect(keysInput(true, false, false, true)).toEqual({ x: -STICK_MAX, y: STICK_MAX });
    expect(keysInput(true, true, false, false)).toEqual({ x: 0, y: 0 });
  });
});
