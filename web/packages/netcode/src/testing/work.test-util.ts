import type { Schema } from '../wire/schema.js';

/**
 * Counts calls of a schema's per-field and per-entity methods (toInt,
 * fromInt, copy, blank, equal), the decoder's units of work, on this one
 * schema object: tests bound work in operations, not in wall time.
 */
export function countSchemaWork<F extends string>(schema: Schema<F>): { count: number } {
  const counter = { count: 0 };
  const target = schema as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ['toInt', 'fromInt', 'copy', 'blank', 'equal']) {
    const original = target[name]!.bind(schema);
    target[name] = (...args: unknown[]): unknown => {
      counter.count++;
      return original(...args);
    };
  }
  return counter;
}
