// A small game for the netcode's own tests: players glide around a box with
// acceleration and friction (so velocity is state too) and never touch each
// other, so every difference between prediction and host is the network's doing.
import type { NetGame } from '../game.js';
import type { HostTick } from '../host/host.js';
import { buttonsCodec, type Buttons } from '../wire/input-codec.js';
import { Schema, type Entity } from '../wire/schema.js';

export const moverSchema = Schema.define({
  x: { precision: 1 / 64, snapOver: 100, velocity: 'vx' },
  y: { precision: 1 / 64, snapOver: 100, velocity: 'vy' },
  vx: { precision: 1 / 64 },
  vy: { precision: 1 / 64 },
  kind: { interpolate: 'step' },
});
export type MoverField = (typeof moverSchema)['fields'][number];
export type MoverInput = Buttons<'up' | 'down' | 'left' | 'right' | 'boost'>;
export const moverCodec = buttonsCodec(['up', 'down', 'left', 'right', 'boost'] as const);
export const moverGame: NetGame<MoverInput, MoverField> = { schema: moverSchema, input: moverCodec, tickRate: 60 };

export const MAX_SPEED = 300; // units/s
const ACCEL = 2400;
const FRICTION = 8; // 1/s
export const SIZE = 1000;

/** One tick of one player's movement: shared by host and client prediction. */
export function moveMover(e: Entity<MoverField>, input: MoverInput, dt: number): void {
  const ax = (input.right ? 1 : 0) - (input.left ? 1 : 0);
  const ay = (input.down ? 1 : 0) - (input.up ? 1 : 0);
  const norm = ax !== 0 && ay !== 0 ? Math.SQRT1_2 : 1;
  // "boost" is the exploit the validation tests catch: the honest game ignores it.
  const cheat = input.boost ? 4 : 1;
  e.vx += ax * norm * ACCEL * dt;
  e.vy += ay * norm * ACCEL * dt;
  e.vx -= e.vx * FRICTION * dt;
  e.vy -= e.vy * FRICTION * dt;
  const speed = Math.hypot(e.vx, e.vy);
  if (speed > MAX_SPEED) {
    e.vx *= MAX_SPEED / speed;
    e.vy *= MAX_SPEED / speed;
  }
  e.x += e.vx * dt * cheat;
  e.y += e.vy * dt * cheat;
  if (e.x < 0 || e.x > SIZE) {
    e.x = Math.min(SIZE, Math.max(0, e.x));
    e.vx = 0;
  }
  if (e.y < 0 || e.y > SIZE) {
    e.y = Math.min(SIZE, Math.max(0, e.y));
    e.vy = 0;
  }
}

/** The host's world: one mover per player, entity id = slot. */
export class MoverWorld {
  readonly movers = new Map<string, { slot: number; e: Entity<MoverField> }>();

  spawn(id: string, slot: number): void {
    const e = moverSchema.blank();
    e.x = 100 + slot * 80;
    e.y = 500;
    e.kind = 1;
    this.movers.set(id, { slot, e });
  }

  remove(id: string): void {
    this.movers.delete(id);
  }

  step(t: HostTick<MoverInput>): void {
    for (const [id, m] of this.movers) {
      const input = t.inputs.get(id);
      if (input) moveMover(m.e, input, t.dt);
      moverSchema.quantize(m.e);
    }
  }

  *entities(): Iterable<readonly [number, Entity<MoverField>]> {
    for (const m of this.movers.values()) yield [m.slot, m.e];
  }
}

/** A scripted player: holds a direction for 0.2–1.2 s, then picks another (seeded). */
export function scriptedInput(seed: number): () => MoverInput {
  let state = seed >>> 0;
  const rand = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  let left = 0;
  let current: MoverInput = moverCodec.neutral;
  return () => {
    if (left-- <= 0) {
      left = 12 + Math.floor(rand() * 60);
      const d = Math.floor(rand() * 9);
      current = { up: d < 3, down: d >= 6, left: d % 3 === 0, right: d % 3 === 2, boost: false };
    }
    return current;
  };
}
