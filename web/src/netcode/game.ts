import type { InputCodec } from './wire/input-codec';
import type { Schema } from './wire/schema';

/**
 * The part of a game both ends share: its state layout, its input encoding
 * and its tick rate. Define it once in a module imported by host and client.
 *
 * @example
 * export const game: NetGame<Buttons<'up' | 'down'>, 'x' | 'y'> = {
 *   schema: Schema.define({ x: { precision: 1 / 64 }, y: { precision: 1 / 64 } }),
 *   input: buttonsCodec(['up', 'down'] as const),
 *   tickRate: 60,
 * };
 */
export interface NetGame<I, F extends string> {
  readonly schema: Schema<F>;
  readonly input: InputCodec<I>;
  /** Simulation ticks per second (default 60). */
  readonly tickRate?: number;
}

export const DEFAULT_TICK_RATE = 60;
export const DEFAULT_SNAPSHOT_RATE = 30;

/** A player as the netcode knows them: the lobby's player id and a small slot number the host assigns. */
export interface NetPlayer {
  readonly id: string;
  /** 0 for the host, 1–255 for clients, reused after a player leaves. */
  readonly slot: number;
}
