import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildVectors, type Vectors } from './go-vectors.test-util.js';

// netcode/testdata/vectors.json is the contract with the Go netcode package
// (netcode/vectors_test.go decodes and re-encodes every vector). This side
// must still produce exactly those bytes and those decoded values: a change
// to the wire format fails here first, and the file is regenerated with
// `npx vite-node netcode/testdata/generate.ts` only on purpose.
const committed = JSON.parse(readFileSync(new URL('../../../../../netcode/testdata/vectors.json', import.meta.url), 'utf8')) as Vectors;

describe('the Go netcode vectors', () => {
  it('are what this implementation encodes and decodes', () => {
    const built = JSON.parse(JSON.stringify(buildVectors())) as Vectors;
    expect(built.schemas).toEqual(committed.schemas);
    expect(built.inputs).toEqual(committed.inputs);
    expect(built.events).toEqual(committed.events);
    expect(built.snapshots).toEqual(committed.snapshots);
    expect(built.bad).toEqual(committed.bad);
  });

  it('cover every kind of packet and refusal', () => {
    expect(committed.snapshots.flatMap((s) => s.steps).filter((s) => 'error' in s)).toHaveLength(1);
    expect(committed.snapshots.flatMap((s) => s.steps).filter((s) => 'skip' in s)).toHaveLength(2);
    expect(new Set(committed.bad.map((b) => b.kind))).toEqual(new Set(['input', 'snapshot', 'event']));
  });
});
