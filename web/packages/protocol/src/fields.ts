import { ProtocolError } from './errors.js';

// Field codecs reproduce what vmihailenco/msgpack does with the Go structs:
// a struct is a map whose keys follow the Go field order, and a field tagged
// omitempty is left out when it holds its zero value. Decoding is the
// reverse, with the zero value for a missing (or nil) field, so a decoded
// body always has every field.

/** How one Go field is written and read. */
export interface Field<V> {
  /** False for the few fields Go writes even when zero (no omitempty tag). */
  readonly omitEmpty: boolean;
  zero(): V;
  isZero(value: V | undefined): boolean;
  /** The value to hand to msgpack; undefined counts as the zero value. */
  toWire(value: V | undefined): unknown;
  /** Validates an untrusted decoded value; `path` names it in errors. */
  fromWire(raw: unknown, path: string): V;
}

/** A struct's fields in Go declaration order (object literal order is kept). */
export type Schema<T> = { readonly [K in keyof T]-?: Field<T[K]> };

function malformed(path: string, want: string, raw: unknown): ProtocolError {
  const got = raw === null ? 'nil' : Array.isArray(raw) ? 'array' : raw instanceof Uint8Array ? 'bin' : typeof raw;
  return new ProtocolError('malformed', `${path} is ${got}, want ${want}`);
}

export const str: Field<string> = {
  omitEmpty: true,
  zero: () => '',
  isZero: (v) => v === undefined || v === '',
  toWire: (v) => v ?? '',
  fromWire(raw, path) {
    if (raw === null || raw === undefined) return '';
    if (typeof raw !== 'string') throw malformed(path, 'string', raw);
    return raw;
  },
};

export const int: Field<number> = {
  omitEmpty: true,
  zero: () => 0,
  isZero: (v) => v === undefined || v === 0,
  toWire(v) {
    const n = v ?? 0;
    if (!Number.isSafeInteger(n)) throw new ProtocolError('malformed', `${n} is not an integer`);
    return n;
  },
  fromWire(raw, path) {
    if (raw === null || raw === undefined) return 0;
    if (typeof raw !== 'number' || !Number.isSafeInteger(raw)) throw malformed(path, 'integer', raw);
    return raw;
  },
};

export const bool: Field<boolean> = {
  omitEmpty: true,
  zero: () => false,
  isZero: (v) => v !== true,
  toWire: (v) => v === true,
  fromWire(raw, path) {
    if (raw === null || raw === undefined) return false;
    if (typeof raw !== 'boolean') throw malformed(path, 'bool', raw);
    return raw;
  },
};

/**
 * A Go []byte: msgpack bin. A decoded value is copied out of the frame so a
 * caller may keep it without pinning the whole frame's buffer.
 */
export const bin: Field<Uint8Array> = {
  omitEmpty: true,
  zero: () => new Uint8Array(0),
  isZero: (v) => v === undefined || v.length === 0,
  toWire: (v) => v ?? new Uint8Array(0),
  fromWire(raw, path) {
    if (raw === null || raw === undefined) return new Uint8Array(0);
    if (!(raw instanceof Uint8Array)) throw malformed(path, 'bin', raw);
    return raw.slice();
  },
};

export function list<V>(item: Field<V>): Field<V[]> {
  return {
    omitEmpty: true,
    zero: () => [],
    isZero: (v) => v === undefined || v.length === 0,
    toWire: (v) => (v ?? []).map((x) => item.toWire(x)),
    fromWire(raw, path) {
      if (raw === null || raw === undefined) return [];
      if (!Array.isArray(raw)) throw malformed(path, 'array', raw);
      return raw.map((x: unknown, i) => item.fromWire(x, `${path}[${i}]`));
    },
  };
}

function isMap(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && !(raw instanceof Uint8Array);
}

export function struct<T extends object>(schema: Schema<T>): Field<T> {
  const keys = Object.keys(schema) as (keyof T & string)[];
  const fieldOf = (k: keyof T & string): Field<T[typeof k]> => schema[k];
  const field: Field<T> = {
    omitEmpty: true,
    zero() {
      const out = {} as T;
      for (const k of keys) out[k] = fieldOf(k).zero();
      return out;
    },
    isZero: (v) => v === undefined || keys.every((k) => fieldOf(k).isZero(v[k])),
    toWire(v) {
      const out: Record<string, unknown> = {};
      for (const k of keys) {
        const f = fieldOf(k);
        const value = v === undefined ? undefined : v[k];
        if (f.omitEmpty && f.isZero(value)) continue;
        out[k] = f.toWire(value);
      }
      return out;
    },
    fromWire(raw, path) {
      if (raw === null || raw === undefined) return field.zero();
      if (!isMap(raw)) throw malformed(path, 'map', raw);
      const out = {} as T;
      // Unknown keys are skipped, as in Go, so newer peers can add fields.
      for (const k of keys) {
        out[k] = fieldOf(k).fromWire(Object.hasOwn(raw, k) ? raw[k] : undefined, `${path}.${k}`);
      }
      return out;
    },
  };
  return field;
}

/** A field Go writes even when zero (declared without omitempty). */
export function always<V>(f: Field<V>): Field<V> {
  return { ...f, omitEmpty: false };
}
