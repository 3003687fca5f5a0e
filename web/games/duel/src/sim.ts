// The duel's physics: two players and a ball on a pitch with a goal at each
// end, in integers only (positions in 1/256 px), so every peer that runs the
// same inputs reaches the same state bit for bit — what LockstepSession's
// rollback and lockstep both rest on. No Math.random, no floats, no Date.
import { buttonsCodec, type Buttons, type DeterministicGame } from '@hostrelay/netcode';

export type DuelInput = Buttons<'up' | 'down' | 'left' | 'right' | 'kick'>;

/** 1/256 px: the fixed-point unit. */
export const FP = 256;
/** The pitch, px. */
export const PITCH_W = 640;
export const PITCH_H = 360;
/** The goal mouth's height, px, centred on each end line. */
export const GOAL_H = 120;
export const PLAYER_R = 14;
export const BALL_R = 8;
export const TICK_RATE = 60;
/** Frames the ball stays on the spot after a goal, before play resumes. */
export const KICKOFF_FRAMES = 60;

const W = PITCH_W * FP;
const H = PITCH_H * FP;
const GOAL_TOP = ((PITCH_H - GOAL_H) / 2) * FP;
const GOAL_BOTTOM = ((PITCH_H + GOAL_H) / 2) * FP;
const ACC = 48;
const REACH = (PLAYER_R + BALL_R) * FP;
/** Speed a touch gives the ball along the line from player to ball, and a kick on top (1/256 px per frame). */
const TOUCH = 3 * FP;
const KICK = 7 * FP;

/**
 * The state, as one flat list of integers: per player x, y, vx, vy; then
 * the ball's x, y, vx, vy; then the left and right scores and the frames
 * left until kick-off. Flat so serialize() is one copy.
 */
export interface DuelState {
  readonly v: readonly number[];
}

export const BALL = 8;
export const SCORE = 12;
export const PAUSE = 14;
const LEN = 15;

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);

/** Where each side starts: slot 0 on the left, slot 1 on the right. */
function kickoff(v: number[]): void {
  v[0] = (PITCH_W / 4) * FP;
  v[1] = (PITCH_H / 2) * FP;
  v[4] = ((3 * PITCH_W) / 4) * FP;
  v[5] = (PITCH_H / 2) * FP;
  v[2] = v[3] = v[6] = v[7] = 0;
  v[BALL] = W / 2;
  v[BALL + 1] = H / 2;
  v[BALL + 2] = v[BALL + 3] = 0;
}

export function initialDuel(): DuelState {
  const v = new Array<number>(LEN).fill(0);
  kickoff(v);
  return { v };
}

/** An integer square root (floor), so no float result can differ between machines. */
export function isqrt(n: number): number {
  if (n <= 0) return 0;
  let x = Math.floor(Math.sqrt(n));
  // Math.sqrt is correctly rounded, but floor of it can be off by one for large n: fix up in integers.
  while (x * x > n) x--;
  while ((x + 1) * (x + 1) <= n) x++;
  return x;
}

/** One frame: players move, touch or kick the ball, the ball rolls, bounces, and maybe scores. */
export function stepDuel(s: DuelState, inputs: readonly DuelInput[]): DuelState {
  const v = s.v.slice();
  if (v[PAUSE]! > 0) {
    v[PAUSE] = v[PAUSE]! - 1;
    return { v };
  }
  for (let i = 0; i < 2; i++) {
    const inp = inputs[i] ?? { up: false, down: false, left: false, right: false, kick: false };
    const o = 4 * i;
    // Accelerate, then rub off 1/16 of the speed: top speed 15·ACC/256 ≈ 2.8 px a frame.
    v[o + 2] = ((v[o + 2]! + ((inp.right ? 1 : 0) - (inp.left ? 1 : 0)) * ACC) * 15) >> 4;
    v[o + 3] = ((v[o + 3]! + ((inp.down ? 1 : 0) - (inp.up ? 1 : 0)) * ACC) * 15) >> 4;
    v[o] = clamp(v[o]! + v[o + 2]!, PLAYER_R * FP, W - PLAYER_R * FP);
    v[o + 1] = clamp(v[o + 1]! + v[o + 3]!, PLAYER_R * FP, H - PLAYER_R * FP);
    const dx = v[BALL]! - v[o]!;
    const dy = v[BALL + 1]! - v[o + 1]!;
    const d2 = dx * dx + dy * dy;
    if (d2 < REACH * REACH) {
      // Push the ball out to the rim and send it away along the line between centres.
      const d = Math.max(1, isqrt(d2));
      const push = TOUCH + (inp.kick ? KICK : 0);
      v[BALL] = v[o]! + Math.trunc((dx * REACH) / d);
      v[BALL + 1] = v[o + 1]! + Math.trunc((dy * REACH) / d);
      v[BALL + 2] = Math.trunc((dx * push) / d) + (v[o + 2]! >> 1);
      v[BALL + 3] = Math.trunc((dy * push) / d) + (v[o + 3]! >> 1);
    }
  }
  // The ball loses 1/64 of its speed a frame.
  v[BALL + 2] = Math.trunc((v[BALL + 2]! * 63) / 64);
  v[BALL + 3] = Math.trunc((v[BALL + 3]! * 63) / 64);
  v[BALL] = v[BALL]! + v[BALL + 2]!;
  v[BALL + 1] = v[BALL + 1]! + v[BALL + 3]!;
  const r = BALL_R * FP;
  if (v[BALL + 1]! < r || v[BALL + 1]! > H - r) {
    v[BALL + 1] = clamp(v[BALL + 1]!, r, H - r);
    v[BALL + 3] = -v[BALL + 3]!;
  }
  const inMouth = v[BALL + 1]! > GOAL_TOP && v[BALL + 1]! < GOAL_BOTTOM;
  if (inMouth && (v[BALL]! < 0 || v[BALL]! > W)) {
    // Into the left goal: a point for the right (slot 1), and the other way round.
    const side = v[BALL]! < 0 ? 1 : 0;
    v[SCORE + side] = v[SCORE + side]! + 1;
    kickoff(v);
    v[PAUSE] = KICKOFF_FRAMES;
  } else if (!inMouth && (v[BALL]! < r || v[BALL]! > W - r)) {
    v[BALL] = clamp(v[BALL]!, r, W - r);
    v[BALL + 2] = -v[BALL + 2]!;
  }
  return { v };
}

export const duelInput = buttonsCodec(['up', 'down', 'left', 'right', 'kick'] as const);

/** The duel as LockstepSession runs it: two players, 60 frames a second. */
export const duelGame: DeterministicGame<DuelState, DuelInput> = {
  input: duelInput,
  tickRate: TICK_RATE,
  initial: () => initialDuel(),
  step: (s, inputs) => stepDuel(s, inputs),
  serialize: (s) => new Uint8Array(Int32Array.from(s.v).buffer),
  // Lets the host seat a player mid-match, resume one who was cut off, heal a desync and switch modes.
  deserialize: (b) => {
    if (b.length !== LEN * 4) throw new RangeError(`duel: a state is ${LEN * 4} bytes, not ${b.length}`);
    return { v: Array.from(new Int32Array(b.slice().buffer)) };
  },
};

/** The scores, left (slot 0) then right (slot 1). */
export function scores(s: DuelState): [number, number] {
  return [s.v[SCORE]!, s.v[SCORE + 1]!];
}
