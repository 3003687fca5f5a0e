import { ByteReader, ByteWriter, WireError } from './bytes';
import { MAX_ENTITY_ID, type Entity, type EntityMap, type ReadonlyEntityMap, type Schema } from './schema';

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
 */
export function decodeDelta<F extends string>(
  schema: Schema<F>,
  base: ReadonlyEntityMap<F> | null,
  r: ByteReader,
  dt = 0,
): EntityMap<F> {
  const out: EntityMap<F> = new Map(base ?? EMPTY) as EntityMap<F>;
  if (base && dt !== 0 && schema.fields.some((_, i) => schema.velocity(i) >= 0)) {
    // Entities the delta does not mention moved exactly as predicted.
    for (const [id, b] of base) {
      const e = schema.copy(b);
      for (let i = 0; i < schema.size; i++) e[schema.fields[i]!] = schema.fromInt(i, predicted(schema, b, i, dt));
      if (!schema.equal(e, b)) out.set(id, e);
    }
  }
  const count = r.varint();
  if (count > MAX_ENTITY_ID + 1) throw new WireError('netcode: too many entities in a delta');
  let prev = -1;
  for (let k = 0; k < count; k++) {
    const id = prev + 1 + r.varint();
    if (id > MAX_ENTITY_ID) throw new WireError('netcode: entity id out of range');
    prev = id;
    const header = r.varint();
    if (header === 0) {
      out.delete(id);
      continue;
    }
    let mask = (header - 1) / 2;
    if (!Number.isInteger(mask) || mask >= 2 ** schema.size) throw new WireError('netcode: bad field mask');
    const b = base?.get(id);
    const e: Entity<F> = b ? schema.copy(b) : schema.blank();
    for (let i = 0; i < schema.size; i++, mask = Math.floor(mask / 2)) {
      // Unchanged fields of a moving entity still move: the prediction was exact.
      const q = predicted(schema, b, i, dt) + (mask % 2 === 1 ? r.svarint() : 0);
      e[schema.fields[i]!] = schema.fromInt(i, q);
    }
    out.set(id, e);
  }
  return out;
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
