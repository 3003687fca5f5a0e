import { describe, expect, it } from 'vitest';
import { inputCodec } from './schema';
import { followBase, knobOffset, mergeInputs, STICK, stickDirection, TouchInput, type Direction } from './touch-input';

const size = { radius: 50, deadZone: 10 };
const dir = (d: Partial<Direction>): Direction => ({ up: false, down: false, left: false, right: false, ...d });
const idle = inputCodec.neutral;

describe('stickDirection', () => {
  it('says nothing inside the dead zone, and at its edge', () => {
    expect(stickDirection(0, 0, size)).toEqual(dir({}));
    expect(stickDirection(9.9, 0, size)).toEqual(dir({}));
    expect(stickDirection(10, 0, size)).toEqual(dir({})); // at the dead zone: still resting
    expect(stickDirection(-6, 7.9, size)).toEqual(dir({})); // 9.9 px away, diagonally
    expect(stickDirection(10.1, 0, size)).toEqual(dir({ right: true }));
    expect(stickDirection(Number.NaN, 0, size)).toEqual(dir({}));
  });

  it('points in 8 directions of 45° each, y down as on screen', () => {
    const at = (deg: number): Direction => {
      const r = (deg * Math.PI) / 180;
      return stickDirection(30 * Math.cos(r), 30 * Math.sin(r), size);
    };
    expect(at(0)).toEqual(dir({ right: true }));
    expect(at(45)).toEqual(dir({ right: true, down: true }));
    expect(at(90)).toEqual(dir({ down: true }));
    expect(at(135)).toEqual(dir({ left: true, down: true }));
    expect(at(180)).toEqual(dir({ left: true }));
    expect(at(-135)).toEqual(dir({ left: true, up: true }));
    expect(at(-90)).toEqual(dir({ up: true }));
    expect(at(-45)).toEqual(dir({ right: true, up: true }));
    // The sector edges sit halfway between: 22° is still right, 23° already right and down.
    expect(at(22)).toEqual(dir({ right: true }));
    expect(at(23)).toEqual(dir({ right: true, down: true }));
    expect(at(-67)).toEqual(dir({ right: true, up: true }));
    expect(at(-68)).toEqual(dir({ up: true }));
  });

  it('reads the same at the rim and far past it: only the angle counts', () => {
    expect(stickDirection(50, 0, size)).toEqual(dir({ right: true }));
    expect(stickDirection(500, 0, size)).toEqual(dir({ right: true }));
    expect(stickDirection(-400, -400, size)).toEqual(dir({ left: true, up: true }));
    expect(stickDirection(0, 1e9, size)).toEqual(dir({ down: true }));
  });

  it('has a dead zone smaller than the rim by default', () => {
    expect(STICK.deadZone).toBeGreaterThan(0);
    expect(STICK.deadZone).toBeLessThan(STICK.radius / 2);
  });
});

describe('knobOffset', () => {
  it('follows the thumb up to the rim', () => {
    expect(knobOffset(0, 0, size)).toEqual({ x: 0, y: 0 });
    expect(knobOffset(30, -40, size)).toEqual({ x: 30, y: -40 }); // exactly on the rim (50)
    expect(knobOffset(-20, 5, size)).toEqual({ x: -20, y: 5 });
  });

  it('stops on the rim past it, in the thumb’s direction', () => {
    const k = knobOffset(60, -80, size); // 100 px away
    expect(k.x).toBeCloseTo(30, 9);
    expect(k.y).toBeCloseTo(-40, 9);
    const far = knobOffset(0, 5000, size);
    expect(far).toEqual({ x: 0, y: 50 });
  });
});

describe('followBase', () => {
  it('stays where the thumb landed while the thumb is within the rim, and at it', () => {
    const base = { x: 100, y: 100 };
    expect(followBase(base, { x: 140, y: 100 }, size)).toBe(base);
    expect(followBase(base, { x: 130, y: 60 }, size)).toBe(base); // on the rim
  });

  it('is dragged along past the rim so the thumb stays on it', () => {
    const b = followBase({ x: 100, y: 100 }, { x: 200, y: 100 }, size);
    expect(b).toEqual({ x: 150, y: 100 });
    // Coming back now turns left after 50 px plus the dead zone, not after the 100 px overshoot.
    const thumb = { x: 139, y: 100 };
    expect(stickDirection(thumb.x - b.x, thumb.y - b.y, size)).toEqual(dir({ left: true }));
  });
});

describe('mergeInputs', () => {
  it('presses what either source presses', () => {
    expect(mergeInputs(idle, idle)).toEqual(idle);
    expect(mergeInputs({ ...idle, left: true }, { ...idle, kick: true, up: true })).toEqual({ ...idle, left: true, up: true, kick: true });
    expect(mergeInputs({ ...idle, right: true }, idle)).toEqual({ ...idle, right: true });
  });
});

describe('TouchInput', () => {
  it('steers from where the thumb landed, not from the stick’s centre', () => {
    const t = new TouchInput(size);
    expect(t.stickDown(1, { x: 300, y: 700 })).toBe(true);
    expect(t.read()).toEqual(idle); // landing moves nothing
    t.stickMove(1, { x: 300, y: 660 });
    expect(t.read()).toEqual({ ...idle, up: true });
    expect(t.view).toEqual({ base: { x: 300, y: 700 }, knob: { x: 0, y: -40 } });
    t.stickUp(1);
    expect(t.read()).toEqual(idle);
    expect(t.view).toBeNull();
  });

  it('keeps the knob on the rim and the base following a thumb dragged far past it', () => {
    const t = new TouchInput(size);
    t.stickDown(1, { x: 0, y: 0 });
    t.stickMove(1, { x: 200, y: 0 });
    expect(t.view).toEqual({ base: { x: 150, y: 0 }, knob: { x: 50, y: 0 } });
    expect(t.read()).toEqual({ ...idle, right: true });
    t.stickMove(1, { x: 130, y: 0 }); // back 70 px: the base is 20 px right of the thumb
    expect(t.read()).toEqual({ ...idle, left: true });
  });

  it('takes stick and Kick at once, each finger by its own id', () => {
    const t = new TouchInput(size);
    t.stickDown(1, { x: 0, y: 0 });
    t.stickMove(1, { x: -30, y: 30 });
    t.kickDown(2);
    expect(t.read()).toEqual({ ...idle, left: true, down: true, kick: true });
    expect(t.read()).toEqual({ ...idle, left: true, down: true, kick: true }); // held, not just tapped
    // A second finger on the stick's area is not a jump of the stick.
    expect(t.stickDown(3, { x: 100, y: 100 })).toBe(false);
    t.stickMove(3, { x: 100, y: 0 });
    expect(t.read()).toEqual({ ...idle, left: true, down: true, kick: true });
    // Lifting Kick leaves the stick held, and lifting the stray finger does nothing.
    t.kickUp(2);
    t.stickUp(3);
    expect(t.read()).toEqual({ ...idle, left: true, down: true });
    // Moves of another id do not steer.
    t.stickMove(2, { x: 40, y: 0 });
    expect(t.read()).toEqual({ ...idle, left: true, down: true });
  });

  it('kicks once for a tap shorter than a tick', () => {
    const t = new TouchInput(size);
    t.kickDown(5);
    t.kickUp(5);
    expect(t.read().kick).toBe(true);
    expect(t.read().kick).toBe(false);
  });

  it('holds Kick while any finger is on it', () => {
    const t = new TouchInput(size);
    t.kickDown(1);
    t.kickDown(2);
    t.kickUp(1);
    t.read();
    expect(t.read().kick).toBe(true);
    t.kickUp(2);
    expect(t.read().kick).toBe(false);
  });

  it('lets go of everything on releaseAll', () => {
    const t = new TouchInput(size);
    t.stickDown(1, { x: 0, y: 0 });
    t.stickMove(1, { x: 40, y: 0 });
    t.kickDown(2);
    t.releaseAll();
    expect(t.read()).toEqual(idle);
    expect(t.view).toBeNull();
    expect(t.kicking).toBe(false);
    // The stick takes a new finger afterwards.
    expect(t.stickDown(7, { x: 0, y: 0 })).toBe(true);
  });
});
