import type { InputCodec } from './wire/input-codec.js';
import type { ReadonlyEntityMap, Schema } from './wire/schema.js';

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

/**
 * What a client hands to the host game it becomes when the old host goes
 * away (NetClient.handover(), then `new NetHost({ handover, ... })`): the
 * newest world it received and who was playing, so the game goes on where
 * it was instead of starting over.
 */
export interface Handover<F extends string> {
  /** The newest snapshot's tick: the new host's clock continues from it. */
  readonly tick: number;
  /** The world in that snapshot, exactly as the old host sent it. */
  readonly entities: ReadonlyEntityMap<F>;
  /** Everyone the old host had in the game except the old host, with their slots (this tab included). */
  readonly players: readonly NetPlayer[];
  /** This tab's slot: the new host keeps playing as the same entity. */
  readonly slot: number;
  /** The host that went away. Its entity is not carried over: the game should not seed it. */
  readonly previousHost: string;
}

/** One frame's worth of world to draw, on the host (NetHost.frame()) or a client (NetClient.frame(), a ClientView). */
export interface NetView<F extends string> {
  /** The (fractional) host tick drawn. */
  renderTick: number;
  /** Every entity, as this tab draws it now. */
  entities: ReadonlyEntityMap<F>;
}
