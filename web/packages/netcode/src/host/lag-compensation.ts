import { lerpEntity, type Entity, type ReadonlyEntityMap, type Schema } from '../wire/schema.js';

export interface LagCompensationOptions {
  tickRate: number;
  /** Furthest back a rewind goes, ms (default 200, capped at 200: further favours the laggy too much). */
  maxRewindMs?: number;
}

export const MAX_REWIND_MS = 200;

/**
 * Server-side rewind (Valve's lag compensation): the host keeps every
 * entity's recent states, and to judge a client's action (a shot, a kick)
 * it looks at the world as that client saw it, at the tick it was showing,
 * interpolated between the two ticks around it. Rewind is capped so a very
 * laggy player cannot reach far into everyone else's past.
 *
 * @example
 * const lag = new LagCompensator(game.schema, { tickRate: 60 });
 * host.on('tick', (tick) => lag.record(tick, world.entities()));
 * const view = host.viewTick(playerId);           // what that client was showing
 * const ball = view === null ? null : lag.at(BALL, view, host.tick);
 */
export class LagCompensator<F extends string> {
  private readonly history = new Map<number, ReadonlyEntityMap<F>>();
  private readonly maxRewindTicks: number;
  private newest = 0;

  constructor(
    private readonly schema: Schema<F>,
    options: LagCompensationOptions,
  ) {
    const ms = Math.min(MAX_REWIND_MS, Math.max(0, options.maxRewindMs ?? MAX_REWIND_MS));
    this.maxRewindTicks = (ms / 1000) * options.tickRate;
  }

  /** Stores the world at a tick (entities are kept by reference: do not mutate them afterwards). */
  record(tick: number, entities: ReadonlyEntityMap<F>): void {
    this.history.set(tick, entities);
    this.newest = Math.max(this.newest, tick);
    const keep = Math.ceil(this.maxRewindTicks) + 2;
    for (const t of this.history.keys()) {
      if (t < this.newest - keep) this.history.delete(t);
      else break; // Map iterates in insertion order, oldest first
    }
  }

  /** The tick a rewind to `viewTick` actually uses: never earlier than maxRewind before `nowTick`, never later than now. */
  clampTick(viewTick: number, nowTick: number): number {
    return Math.min(nowTick, Math.max(nowTick - this.maxRewindTicks, viewTick));
  }

  /**
   * An entity as it was at a fractional tick, fields interpolated linearly
   * ('step' fields and jumps over snapOver take the earlier tick), or null
   * if it did not exist then.
   */
  at(entityId: number, viewTick: number, nowTick = this.newest): Entity<F> | null {
    const t = this.clampTick(viewTick, nowTick);
    const t0 = Math.floor(t);
    const a = this.history.get(t0)?.get(entityId);
    const b = this.history.get(t0 + 1)?.get(entityId);
    if (!a) return b ? this.schema.copy(b) : null;
    if (!b || t === t0) return this.schema.copy(a);
    return lerpEntity(this.schema, a, b, t - t0);
  }
}
