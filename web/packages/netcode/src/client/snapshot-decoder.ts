import { ByteReader, WireError } from '../wire/bytes.js';
import { decodeDelta } from '../wire/delta.js';
import { readSnapshotHeader, type SnapshotHeader } from '../wire/packets.js';
import type { EntityMap, ReadonlyEntityMap, Schema } from '../wire/schema.js';
import { hashEntities, HashLog } from '../wire/state-hash.js';

/** Snapshots kept as baselines: the host encodes against our newest ack, which may be a little old. */
const BASELINES = 64;

export type Decoded<F extends string> =
  | { kind: 'snapshot'; header: SnapshotHeader; entities: ReadonlyEntityMap<F>; hashOk: boolean | null }
  /** Already have it, or its baseline is gone (the next snapshot will do). */
  | { kind: 'skip' }
  /** Malformed or over a limit (the schema's maxEntities): dropped, and why. */
  | { kind: 'bad'; error: string };

/**
 * Rebuilds snapshots from their deltas against the baselines we hold, and
 * checks each against the host's hash when it has one.
 */
export class SnapshotDecoder<F extends string> {
  /** Hash of our reconstruction of each snapshot, by tick. */
  readonly hashLog = new HashLog();
  private readonly baselines = new Map<number, ReadonlyEntityMap<F>>();

  constructor(
    private readonly schema: Schema<F>,
    private readonly tickRate: number,
  ) {}

  decode(data: Uint8Array): Decoded<F> {
    let header: SnapshotHeader;
    let entities: EntityMap<F>;
    try {
      const r = new ByteReader(data);
      header = readSnapshotHeader(r);
      if (this.baselines.has(header.tick)) return { kind: 'skip' };
      const base = header.baseTick === 0 ? null : this.baselines.get(header.baseTick);
      if (base === undefined) return { kind: 'skip' };
      entities = decodeDelta(this.schema, base, r, base ? (header.tick - header.baseTick) / this.tickRate : 0);
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      return { kind: 'bad', error: err.message };
    }
    let hashOk: boolean | null = null;
    if (header.hash !== null) {
      const mine = hashEntities(this.schema, entities);
      this.hashLog.record(header.tick, mine);
      hashOk = mine === header.hash;
    }
    this.baselines.set(header.tick, entities);
    for (const t of this.baselines.keys()) {
      if (this.baselines.size <= BASELINES) break;
      this.baselines.delete(t);
    }
    return { kind: 'snapshot', header, entities, hashOk };
  }
}
