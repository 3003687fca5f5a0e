import { ByteWriter } from '../wire/bytes.js';
import { encodeDelta } from '../wire/delta.js';
import { writeSnapshotHeader } from '../wire/packets.js';
import type { ReadonlyEntityMap, Schema } from '../wire/schema.js';
import { hashEntities } from '../wire/state-hash.js';

/** A snapshot the host sent earlier, which a later one may be a delta against. */
export interface SentSnapshot<F extends string> {
  tick: number;
  entities: ReadonlyEntityMap<F>;
}

/**
 * A snapshot packet as the host writes one at `tickRate`: header, then the
 * delta of `next` against `base` (null: a full snapshot). `hash` defaults to
 * the state hash of `next`; tests of desync detection pass another.
 */
export function snapshotPacket<F extends string>(
  schema: Schema<F>,
  tickRate: number,
  tick: number,
  next: ReadonlyEntityMap<F>,
  base: SentSnapshot<F> | null,
  hash: number | null = hashEntities(schema, next),
): Uint8Array {
  const w = new ByteWriter();
  writeSnapshotHeader(w, {
    packetSeq: tick & 0xffff,
    tick,
    baseTick: base?.tick ?? 0,
    ackSeq: 0,
    stickyTotal: 0,
    echo: null,
    inputSlack: 0,
    upLoss255: 0,
    hash,
  });
  encodeDelta(schema, base?.entities ?? null, next, w, base ? (tick - base.tick) / tickRate : 0);
  return w.finish();
}
