/**
 * What a game's networked state looks like: entities with numbered ids, each
 * a fixed set of numeric fields. The SDK needs to know this much to delta
 * compress, interpolate, hash and smooth without knowing the game.
 */

/** How a remote entity's field moves between two snapshots. */
export type Interpolation = 'linear' | 'step';

export interface FieldSpec {
  /**
   * Size of one step on the wire (default 1). Values are rounded to it on
   * the host, so client prediction starts from exactly what the host has.
   * Prefer a power of two (1/64, 1/256): rounding then is exact in binary.
   */
  readonly precision?: number;
  /** 'linear' (default) slides between snapshots; 'step' holds the older value (ids, flags, scores). */
  readonly interpolate?: Interpolation;
  /** A change larger than this between two snapshots is a jump (a respawn, a goal reset), never a slide. */
  readonly snapOver?: number;
  /**
   * The field holding this one's rate of change, per second (`x: { velocity: 'vx' }`).
   * Deltas are then taken against where the baseline was heading, not where
   * it was: steady motion costs a byte instead of two or three. Only size
   * depends on it; a wrong or missing velocity is still decoded exactly.
   */
  readonly velocity?: string;
}

export type SchemaSpec = Readonly<Record<string, FieldSpec>>;

/** Options of a schema as a whole. */
export interface SchemaOptions {
  /**
   * The most entities one snapshot may hold (default 256, at most 65,536).
   * The host refuses to send more; a client drops a snapshot with more, so
   * a hostile host cannot make it hold or rework more than this per packet.
   */
  readonly maxEntities?: number;
}

/** One entity's state: every field of the schema, already rounded to its precision. */
export type Entity<F extends string> = { [K in F]: number };

/** Entities by id (0–65535). */
export type EntityMap<F extends string> = Map<number, Entity<F>>;
export type ReadonlyEntityMap<F extends string> = ReadonlyMap<number, Readonly<Entity<F>>>;

/** The field names of a schema, for typing game code: `type Fields = FieldsOf<typeof schema>`. */
export type FieldsOf<S> = S extends Schema<infer F> ? F : never;

/** The wire's field mask is a varint; 30 fields keep it within two bytes for the common case. */
export const MAX_FIELDS = 30;
export const MAX_ENTITY_ID = 0xffff;
/**
 * Entities per snapshot unless the schema says otherwise: a 16-player arena
 * uses 18; each one costs the client work on every snapshot (decode, hash,
 * interpolation) and a copy in each of the baselines it keeps.
 */
export const DEFAULT_MAX_ENTITIES = 256;
/** Rounded values must fit here, so deltas and hashes stay in safe integers. */
const MAX_QUANTIZED = 2 ** 31 - 1;

interface ResolvedField {
  readonly name: string;
  readonly scale: number; // 1 / precision
  readonly interpolate: Interpolation;
  readonly snapOver: number;
  velocity: number; // index of the rate field, or -1
}

export class Schema<F extends string> {
  readonly fields: readonly F[];
  /** The most entities one snapshot may hold (SchemaOptions.maxEntities). */
  readonly maxEntities: number;
  /** Whether any field has a velocity: deltas then move unmentioned entities too. */
  readonly moves: boolean;
  private readonly resolved: readonly ResolvedField[];

  private constructor(spec: SchemaSpec, options: SchemaOptions) {
    const names = Object.keys(spec);
    if (names.length === 0 || names.length > MAX_FIELDS) {
      throw new RangeError(`netcode: a schema has 1–${MAX_FIELDS} fields, not ${names.length}`);
    }
    this.maxEntities = options.maxEntities ?? DEFAULT_MAX_ENTITIES;
    if (!Number.isInteger(this.maxEntities) || this.maxEntities < 1 || this.maxEntities > MAX_ENTITY_ID + 1) {
      throw new RangeError(`netcode: maxEntities must be 1–${MAX_ENTITY_ID + 1}, not ${options.maxEntities}`);
    }
    this.fields = names as F[];
    this.resolved = names.map((name) => {
      const f = spec[name]!;
      const precision = f.precision ?? 1;
      if (!(precision > 0) || !Number.isFinite(precision)) {
        throw new RangeError(`netcode: field ${name}: precision must be positive`);
      }
      return { name, scale: 1 / precision, interpolate: f.interpolate ?? 'linear', snapOver: f.snapOver ?? Infinity, velocity: -1 };
    });
    names.forEach((name, i) => {
      const v = spec[name]!.velocity;
      if (v === undefined) return;
      const j = names.indexOf(v);
      if (j < 0 || j === i) throw new RangeError(`netcode: field ${name}: velocity names no other field (${v})`);
      (this.resolved[i] as ResolvedField).velocity = j;
    });
    this.moves = this.resolved.some((f) => f.velocity >= 0);
  }

  /**
   * Declares a schema. Field order is the object's key order; host and
   * client must use the same definition (share the module).
   *
   * @example
   * const schema = Schema.define({
   *   x: { precision: 1 / 64, snapOver: 200 },
   *   y: { precision: 1 / 64, snapOver: 200 },
   *   kind: { interpolate: 'step' },
   * }, { maxEntities: 64 });
   */
  static define<S extends SchemaSpec>(spec: S, options: SchemaOptions = {}): Schema<keyof S & string> {
    return new Schema<keyof S & string>(spec, options);
  }

  get size(): number {
    return this.fields.length;
  }

  /** An entity with every field 0: the baseline of an entity the receiver has not seen. */
  blank(): Entity<F> {
    const e = {} as Entity<F>;
    for (const f of this.fields) e[f] = 0;
    return e;
  }

  copy(src: Readonly<Entity<F>>): Entity<F> {
    const e = {} as Entity<F>;
    for (const f of this.fields) e[f] = src[f];
    return e;
  }

  /** Rounds every field to its precision, in place. NaN becomes 0 rather than poisoning a hash. */
  quantize(e: Entity<F>): Entity<F> {
    for (let i = 0; i < this.resolved.length; i++) {
      const name = this.fields[i]!;
      e[name] = this.fromInt(i, this.toInt(i, e[name]));
    }
    return e;
  }

  /** The integer sent on the wire for field i. */
  toInt(i: number, value: number): number {
    const q = Math.round(value * this.resolved[i]!.scale);
    if (!Number.isFinite(q)) return 0;
    return Math.max(-MAX_QUANTIZED, Math.min(MAX_QUANTIZED, q));
  }

  fromInt(i: number, q: number): number {
    // Dividing by the scale (not multiplying by precision) is the one
    // formula both ends use, so host and client hold identical doubles.
    return q / this.resolved[i]!.scale;
  }

  interpolation(i: number): Interpolation {
    return this.resolved[i]!.interpolate;
  }

  snapOver(i: number): number {
    return this.resolved[i]!.snapOver;
  }

  /** The index of field i's rate field, or -1. */
  velocity(i: number): number {
    return this.resolved[i]!.velocity;
  }

  indexOf(field: F): number {
    return this.fields.indexOf(field);
  }

  /** True when every field is equal (after rounding, equality is exact). */
  equal(a: Readonly<Entity<F>>, b: Readonly<Entity<F>>): boolean {
    for (const f of this.fields) if (a[f] !== b[f]) return false;
    return true;
  }
}

/**
 * Copies an entity map and its entities, rounding each one. More entities
 * than the schema's maxEntities is the game's mistake, thrown here on the
 * host rather than dropped by every client.
 */
export function quantizeAll<F extends string>(schema: Schema<F>, src: Iterable<readonly [number, Readonly<Entity<F>>]>): EntityMap<F> {
  const out: EntityMap<F> = new Map();
  for (const [id, e] of src) {
    if (!Number.isInteger(id) || id < 0 || id > MAX_ENTITY_ID) throw new RangeError(`netcode: entity id ${id} out of 0–${MAX_ENTITY_ID}`);
    out.set(id, schema.quantize(schema.copy(e)));
    if (out.size > schema.maxEntities) {
      throw new RangeError(`netcode: more than ${schema.maxEntities} entities; raise maxEntities in Schema.define if the game needs them`);
    }
  }
  return out;
}

/** Blends two states of one entity field by field, honouring each field's interpolation and snapOver. */
export function lerpEntity<F extends string>(schema: Schema<F>, a: Readonly<Entity<F>>, b: Readonly<Entity<F>>, t: number): Entity<F> {
  const out = schema.copy(a);
  for (let i = 0; i < schema.size; i++) {
    const f = schema.fields[i]!;
    if (schema.interpolation(i) === 'step') continue;
    const d = b[f] - a[f];
    if (Math.abs(d) > schema.snapOver(i)) continue;
    out[f] = a[f] + d * t;
  }
  return out;
}
