import type { InputCodec } from '../wire/input-codec.js';

/**
 * A deterministic game, for rollback and host-clocked lockstep: every peer
 * runs the same `step` on the same inputs and must reach the same state, bit
 * for bit. Use integers (or fixed point) and no Math.random, Date or
 * iteration over unordered keys inside `step`.
 *
 * @example
 * const duel: DeterministicGame<World, Input> = {
 *   input: buttonsCodec(['left', 'right'] as const),
 *   initial: (players) => ({ xs: Array.from({ length: players }, (_, i) => i * 100) }),
 *   step: (w, inputs) => ({ xs: w.xs.map((x, i) => x + (inputs[i]!.right ? 1 : 0) - (inputs[i]!.left ? 1 : 0)) }),
 *   serialize: (w) => new Uint8Array(new Int32Array(w.xs).buffer),
 * };
 */
export interface DeterministicGame<S, I> {
  readonly input: InputCodec<I>;
  /** Frames per second (default 60). */
  readonly tickRate?: number;
  /** The state before frame 1, for this many players. */
  initial(players: number): S;
  /**
   * The state after one frame, from the state before it and each player's
   * input by slot. Must not change `state`: rollback keeps old states and
   * goes back to them.
   */
  step(state: S, inputs: readonly I[], frame: number): S;
  /** The state as bytes: what the state hash is computed over. */
  serialize(state: S): Uint8Array;
  /** A faster hash of the state, if you have one (default: FNV-1a over serialize()). */
  hash?(state: S): number;
  /**
   * The state from serialize()'s bytes. With it the host can seat a player
   * mid-match, resume one who was cut off, heal a desync and switch modes:
   * it sends its state at a frame boundary and the peer plays on from there.
   * Without it the roster is fixed at the start, as before.
   */
  deserialize?(bytes: Uint8Array): S;
  /**
   * A player takes seat `slot` at `frame`, before that frame's step, on
   * every peer alike (default: nothing changes; the seat's input simply
   * stops being neutral). Must not change `state`.
   */
  join?(state: S, slot: number, frame: number): S;
  /** A player leaves seat `slot` at `frame`, before its step; from then on the seat's input is neutral. Must not change `state`. */
  leave?(state: S, slot: number, frame: number): S;
}
