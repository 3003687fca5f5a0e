import { ByteReader, ByteWriter, WireError } from './bytes.js';
import { MAX_ENTITY_ID, type Entity, type EntityMap, type ReadonlyEntityMap, type Schema } from './schema.js';

/**
 * Entity-set delta coding, field by field (Quake 3's netfields): against a
 * baseline the receiver already has, only entities that changed are sent,
 * and of those only the fields that changed, each as a zigzag varint of
 * the change in its rounded integer. A full snapshot is a delta against the
 * empty set, so there is one code path.
 *
 *   count varint
 *   per entity, ids ascending:
 *     id gap varint (id − previous id − 1; the first is the id)
 *     header varint: 0 = removed, else 2·mask + 1 (bit i = field i changed)
 *     per set bit: svarint(new − predicted)
 *
 * "predicted" is the baseline's value, or for a field with a velocity, the
 * baseline's value moved on by that velocity for `dt` seconds (the time
 * between the baseline and this snapshot), rounded: computed from the same
 * baseline integers on both ends, so it is exact.
 */

const EMPTY: ReadonlyMap<number, never> = new Map<number, never>();

/** Field i of a baseline entity, as the integer the next value is coded against. */
function predicted<F extends string>(schema: Schema<F>, b: Readonly<Entity<F>> | undefined, i: number, dt: number): number {
  if (!b) return 0;
  const q = schema.toInt(i, b[schema.fields[i]!]);
  const v = schema.velocity(i);
  if (v < 0 || dt === 0) return q;
  return q + schema.toInt(i, b[schema.fields[v]!] * dt);
}

/** @param dt seconds from the baseline to this snapshot (0 when there is no baseline) */
export function encodeDelta<F extends string>(
  schema: Schema<F>,
  base: ReadonlyEntityMap<F> | null,
  next: ReadonlyEntityMap<F>,
  w: ByteWriter,
  dt = 0,
): void {
  const from = base ?? EMPTY;
  const ids = new Set<number>(next.keys());
  for (const id of from.keys()) ids.add(id);
  const sorted = [...ids].sort((a, b) => a - b);

  const changed: { id: number; removed: boolean; mask: number; deltas: number[] }[] = [];
  for (const id of sorted) {
    const n = next.get(id);
    const b = from.get(id);
    if (!n) {
      changed.push({ id, removed: true, mask: 0, deltas: [] });
      continue;
    }
    let mask = 0;
    const deltas: number[] = [];
    for (let i = 0; i < schema.size; i++) {
      const f = schema.fields[i]!;
      const d = schema.toInt(i, n[f]) - predicted(schema, b, i, dt);
      if (d !== 0) {
        mask += 2 ** i;
        deltas.push(d);
      }
    }
    // An unchanged entity costs nothing; a new all-zero one still needs its header.
    if (mask !== 0 || !b) changed.push({ id, removed: false, mask, deltas });
  }

  w.varint(changed.length);
  let prev = -1;
  for (const c of changed) {
    w.varint(c.id - prev - 1);
    prev = c.id;
    if (c.removed) {
      w.varint(0);
      continue;
    }
    w.varint(2 * c.mask + 1);
    for (const d of c.deltas) w.svarint(d);
  }
}

/**
 * Applies a delta to its baseline. Unchanged entities are shared with the
 * baseline, so callers must treat decoded entities as read-only.
 *
 * The host is another player's tab, so the work is bounded by what it can
 * make us do: at most 2·maxEntities entries (every one takes two bytes or
 * more, so a count the bytes cannot hold is refused before any work) and
 * a result of at most schema.maxEntities entities, built in one ascending
 * merge of the baseline and the entries (no sort, no second pass): work
 * per packet is O(bytes + baseline size × fields), and the baseline is
 * itself capped. The result's ids ascend, which lets hashEntities skip its
 * sort.
 */
export function decodeDelta<F extends string>(
  schema: Schema<F>,
  base: ReadonlyEntityMap<F> | null,
  r: ByteReader,
  dt = 0,
): EntityMap<F> {
  const limit = schema.maxEntities;
  const count = r.varint();
  if (count > r.remaining / 2) throw new WireError(`netcode: a delta of ${count} entities in ${r.remaining} bytes`);
  // Removing every entity of a full baseline and adding as many new ones takes 2·limit entries.
  if (count > 2 * limit) throw tooMany(limit);
  const from = base ?? EMPTY;
  const ids = ascendingIds(from);
  const moving = base !== null && dt !== 0 && schema.moves;
  const out: EntityMap<F> = new Map();
  const put = (id: number, e: Entity<F>): void => {
    out.set(id, e);
    if (out.size > limit) throw tooMany(limit);
  };
  let next = 0; // the first baseline id not yet carried over or replaced
  const carryBelow = (id: number): void => {
    for (; next < ids.length && ids[next]! < id; next++) {
      const bid = ids[next]!;
      const b = from.get(bid)!;
      put(bid, moving ? movedOn(schema, b, dt) : b);
    }
  };
  let prev = -1;
  for (let k = 0; k < count; k++) {
    const id = prev + 1 + r.varint();
    if (id > MAX_ENTITY_ID) throw new WireError('netcode: entity id out of range');
    prev = id;
    carryBelow(id);
    if (ids[next] === id) next++;
    const header = r.varint();
    if (header === 0) continue; // removed
    let mask = (header - 1) / 2;
    if (!Number.isInteger(mask) || mask >= 2 ** schema.size) throw new WireError('netcode: bad field mask');
    const b = from.get(id);
    const e: Entity<F> = b ? schema.copy(b) : schema.blank();
    for (let i = 0; i < schema.size; i++, mask = Math.floor(mask / 2)) {
      // Unchanged fields of a moving entity still move: the prediction was exact.
      const q = predicted(schema, b, i, dt) + (mask % 2 === 1 ? r.svarint() : 0);
      e[schema.fields[i]!] = schema.fromInt(i, q);
    }
    put(id, e);
  }
  carryBelow(Infinity);
  return out;
}

function tooMany(limit: number): WireError {
  return new WireError(`netcode: a snapshot of more than ${limit} entities (the schema's maxEntities)`);
}

/** An entity the delta does not mention, moved exactly as predicted (itself when that changes nothing). */
function movedOn<F extends string>(schema: Schema<F>, b: Readonly<Entity<F>>, dt: number): Entity<F> {
  const e = schema.copy(b);
  for (let i = 0; i < schema.size; i++) e[schema.fields[i]!] = schema.fromInt(i, predicted(schema, b, i, dt));
  return schema.equal(e, b) ? (b as Entity<F>) : e;
}

/** The map's ids in ascending order: its own order when that ascends already (decoded maps do), else sorted. */
export function ascendingIds(m: ReadonlyMap<number, unknown>): number[] {
  const ids = [...m.keys()];
  for (let i = 1; i < ids.length; i++) if (ids[i]! < ids[i - 1]!) return ids.sort((a, b) => a - b);
  return ids;
}

/** Encodes a delta on its own, for tests and size measurements. */
export function deltaBytes<F extends string>(
  schema: Schema<F>,
  base: ReadonlyEntityMap<F> | null,
  next: ReadonlyEntityMap<F>,
  dt = 0,
): Uint8Array {
  const w = new ByteWriter();
  encodeDelta(schema, base, next, w, dt);
  return w.finish();
}
