// Tag, shared by host and clients: what goes on the wire (the schema and
// the input) and the rules that need no physics engine (how fast a player
// runs, who is "it", what a tag does). No Phaser and no DOM here, so the unit
// tests run it directly; the host's Phaser world (world.ts) calls it.
import { Schema, type Entity, type InputCodec, type NetGame } from '@hostrelay/netcode';

/** The field in world units; the camera zooms it to fit the screen. */
export const W = 800;
export const H = 800;
/** A player is a circle of this radius (an integer: the body's top-left is then exact in 1/16ths). */
export const R = 24;
/** Units per second at full stick; "it" runs a little faster, or nobody would ever be caught. */
export const SPEED = 280;
export const IT_SPEED = 320;
/** Ticks a player who was just tagged stands still: the tagger gets away, and nobody tags straight back. */
export const FREEZE_TICKS = 60;
/** The stick's full deflection on the wire: an input of (127, 0) runs right at full speed. */
export const STICK_MAX = 127;
export const MAX_PLAYERS = 8;

// Rounded on the host, so a client's prediction of its own player starts
// from exactly the host's numbers. Every entity is a player; its id is its slot.
export const schema = Schema.define(
  {
    x: { precision: 1 / 16, snapOver: 200, velocity: 'vx' },
    y: { precision: 1 / 16, snapOver: 200, velocity: 'vy' },
    vx: { precision: 1 / 16 },
    vy: { precision: 1 / 16 },
    /** 1 for the player who is "it". */
    it: { interpolate: 'step' },
    /** Ticks left standing still after being tagged. */
    cool: { interpolate: 'step' },
    /** Tags this player has made. */
    tags: { interpolate: 'step' },
    /** Who tagged this player last, as their slot + 1 (0: nobody): no tag-backs. */
    tagger: { interpolate: 'step' },
  },
  { maxEntities: MAX_PLAYERS },
);
export type Field = (typeof schema)['fields'][number];

/**
 * Where the player wants to go: a stick's deflection, each axis −127…127
 * (a key is a full deflection). Not a position, so the host stays the
 * authority: no input moves a player faster than its speed.
 */
export interface TagInput {
  readonly x: number;
  readonly y: number;
}

const clampStick = (v: number): number => Math.max(-STICK_MAX, Math.min(STICK_MAX, Math.round(v) || 0));

/** Two bytes, one signed byte per axis. */
export const inputCodec: InputCodec<TagInput> = {
  size: 2,
  neutral: { x: 0, y: 0 },
  write(input, buf, offset) {
    buf[offset] = clampStick(input.x) & 0xff;
    buf[offset + 1] = clampStick(input.y) & 0xff;
  },
  // Any bytes decode: a hostile client chooses them (−128 becomes −127).
  read(buf, offset) {
    const axis = (b: number | undefined): number => clampStick((((b ?? 0) << 24) >> 24));
    return { x: axis(buf[offset]), y: axis(buf[offset + 1]) };
  },
  equals: (a, b) => a.x === b.x && a.y === b.y,
};

export const tagGame: NetGame<TagInput, Field> = { schema, input: inputCodec, tickRate: 60 };

/** The velocity a player runs at this tick: the stick's direction, its speed capped at full deflection, none while frozen. */
export function velocityOf(p: Readonly<Entity<Field>>, input: TagInput): { vx: number; vy: number } {
  const len = Math.hypot(input.x, input.y);
  if (p.cool > 0 || len === 0) return { vx: 0, vy: 0 };
  const k = ((p.it ? IT_SPEED : SPEED) * Math.min(1, len / STICK_MAX)) / len;
  return { vx: input.x * k, vy: input.y * k };
}

/**
 * One tick of one player before the physics engine moves it: the velocity
 * from the input, and the freeze counting down. The host runs it for every
 * player and hands the velocity to Phaser's arcade body.
 */
export function steer(p: Entity<Field>, input: TagInput): void {
  const { vx, vy } = velocityOf(p, input);
  p.vx = vx;
  p.vy = vy;
  if (p.cool > 0) p.cool--;
}

/**
 * A client's prediction of its own player: steer, then what Phaser's arcade
 * Body.update and checkWorldBounds do to a circle body with no other body in
 * the way, in the same order of floating-point operations (the body's
 * top-left is the centre minus R). So a prediction is exact until another
 * player is bumped into, which only the host's physics knows.
 */
export function movePlayer(p: Entity<Field>, input: TagInput, dt: number): void {
  steer(p, input);
  let left = p.x - R + p.vx * dt;
  let top = p.y - R + p.vy * dt;
  if (left < 0) left = 0;
  else if (left + 2 * R > W) left = W - 2 * R;
  if (top < 0) top = 0;
  else if (top + 2 * R > H) top = H - 2 * R;
  p.x = left + R;
  p.y = top + R;
}

/** Where a player of this slot starts: on a circle around the middle, 45° apart, so nobody starts touching. */
export function spawnPoint(slot: number): { x: number; y: number } {
  const a = ((slot % MAX_PLAYERS) * Math.PI) / 4;
  return { x: Math.round(W / 2 + 250 * Math.sin(a)), y: Math.round(H / 2 - 250 * Math.cos(a)) };
}

/** A player as the tag rules see it: its slot and its entity. */
export interface Seat {
  readonly slot: number;
  readonly entity: Entity<Field>;
}

/**
 * Two players touched (the host's physics says so). If one is "it", not
 * frozen, and was not tagged by the other (no tag-backs), the other is "it"
 * now, frozen, and may not tag the tagger back; the tagger scores. Returns
 * the tagger, or null when the touch was no tag.
 */
export function touch(a: Seat, b: Seat): Seat | null {
  const [tagger, tagged] = a.entity.it && !b.entity.it ? [a, b] : b.entity.it && !a.entity.it ? [b, a] : [null, null];
  if (!tagger || !tagged || tagger.entity.cool > 0 || tagger.entity.tagger === tagged.slot + 1) return null;
  tagger.entity.it = 0;
  tagger.entity.tags++;
  tagged.entity.it = 1;
  tagged.entity.cool = FREEZE_TICKS;
  tagged.entity.tagger = tagger.slot + 1;
  return tagger;
}

/** Whom to make "it" when nobody is: the lowest slot (the host, while it plays). */
export function nextIt(slots: Iterable<number>): number | null {
  let best: number | null = null;
  for (const s of slots) if (best === null || s < best) best = s;
  return best;
}
