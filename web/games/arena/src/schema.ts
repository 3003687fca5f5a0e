// What the arena puts on the wire: its entity layout, its input and its
// tick rate. Host and clients import the same definitions.
import { buttonsCodec, Schema, type Buttons, type NetGame } from '@hostrelay/netcode';

export const ARENA_W = 960;
export const ARENA_H = 540;
export const GOAL_H = 180;
export const PLAYER_R = 18;
export const BALL_R = 11;

export const schema = Schema.define({
  // 1/16 px: finer than any screen, and host and clients round the same way,
  // so the local player's prediction replays the host's arithmetic exactly.
  // Deltas against where the baseline was heading: steady motion costs a byte.
  x: { precision: 1 / 16, snapOver: 120, velocity: 'vx' },
  y: { precision: 1 / 16, snapOver: 120, velocity: 'vy' },
  vx: { precision: 1 / 16 },
  vy: { precision: 1 / 16 },
  kind: { interpolate: 'step' },
  team: { interpolate: 'step' },
  scoreL: { interpolate: 'step' },
  scoreR: { interpolate: 'step' },
});
export type Field = (typeof schema)['fields'][number];

export const Kind = { Player: 1, Ball: 2, Score: 3 } as const;

/** Players use their slot as entity id (0–255); the ball and the scoreboard sit above. */
export const BALL_ID = 1000;
export const SCORE_ID = 1001;

export type ArenaInput = Buttons<'up' | 'down' | 'left' | 'right' | 'kick'>;
export const inputCodec = buttonsCodec(['up', 'down', 'left', 'right', 'kick'] as const);

export const arenaGame: NetGame<ArenaInput, Field> = { schema, input: inputCodec, tickRate: 60 };
export const SNAPSHOT_RATE = 30;

/** Team 0 defends the left goal, team 1 the right; slots alternate. */
export const teamOf = (slot: number): number => slot % 2;
