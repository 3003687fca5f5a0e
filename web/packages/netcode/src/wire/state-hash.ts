import { ascendingIds } from './delta.js';
import type { ReadonlyEntityMap, Schema } from './schema.js';

/**
 * FNV-1a over every entity's id and rounded field integers, ids ascending.
 * Host and client hash the same integers, so equal state gives equal hashes
 * on any engine; a difference means the client's reconstruction diverged.
 */
export function hashEntities<F extends string>(schema: Schema<F>, entities: ReadonlyEntityMap<F>): number {
  let h = 0x811c9dc5;
  const mix = (v: number): void => {
    // Four bytes of the 32-bit two's complement integer.
    for (let k = 0; k < 4; k++) {
      h ^= (v >>> (8 * k)) & 0xff;
      h = Math.imul(h, 0x01000193);
    }
  };
  const ids = ascendingIds(entities); // no sort for a decoded snapshot: its ids already ascend
  for (const id of ids) {
    const e = entities.get(id)!;
    mix(id);
    for (let i = 0; i < schema.size; i++) mix(schema.toInt(i, e[schema.fields[i]!]));
  }
  return h >>> 0;
}

/**
 * FNV-1a over bytes, the same function hashEntities mixes entities with: the
 * deterministic modes hash a game's serialized state with it.
 */
export function hashBytes(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Per-tick hashes of one run, kept for a bounded number of ticks, so two
 * runs (host and client, or two replays) can be compared afterwards.
 */
export class HashLog {
  private readonly byTick = new Map<number, number>();

  constructor(private readonly capacity = 4096) {}

  record(tick: number, hash: number): void {
    this.byTick.set(tick, hash >>> 0);
    if (this.byTick.size > this.capacity) {
      const oldest = this.byTick.keys().next().value;
      if (oldest !== undefined) this.byTick.delete(oldest);
    }
  }

  get(tick: number): number | undefined {
    return this.byTick.get(tick);
  }

  ticks(): number[] {
    return [...this.byTick.keys()].sort((a, b) => a - b);
  }
}

/**
 * The first tick both logs recorded whose hashes differ, or null if they
 * agree wherever both have a hash.
 *
 * @example
 * const tick = firstDivergentTick(hostLog, clientLog);
 * if (tick !== null) console.warn(`desync since tick ${tick}`);
 */
export function firstDivergentTick(a: HashLog, b: HashLog): number | null {
  for (const tick of a.ticks()) {
    const hb = b.get(tick);
    if (hb !== undefined && hb !== a.get(tick)) return tick;
  }
  return null;
}
