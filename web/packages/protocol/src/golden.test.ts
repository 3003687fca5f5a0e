import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame } from './envelope.js';
import { ErrorCode } from './errors.js';
import type { MessageMap, MessageTypeName } from './messages.js';

// protocol/testdata/golden.json is the contract with the Go codec: every
// vector must decode to its JSON form and re-encode to the same bytes.

interface Vector {
  name: string;
  hex: string;
  t: string;
  id?: number;
  b?: unknown;
}

const vectors = JSON.parse(
  readFileSync(new URL('../../../../protocol/testdata/golden.json', import.meta.url), 'utf8'),
) as Vector[];

const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fromHex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

function withDefaults(frameBody: unknown, vectorBody: unknown): unknown {
  // The JSON form omits zero fields exactly like the wire; the decoder fills
  // them in. Compare after dropping the decoder's zero values.
  return JSON.parse(JSON.stringify(frameBody, (_k, v: unknown) => (isZero(v) ? undefined : v))) ?? vectorBody;
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);
}

describe('golden vectors', () => {
  it('has vectors', () => {
    expect(vectors.length).toBeGreaterThan(10);
  });

  for (const v of vectors) {
    it(v.name, () => {
      const bytes = fromHex(v.hex);
      const frame = decodeFrame(bytes);
      expect(frame.t).toBe(v.t);
      expect(frame.id).toBe(v.id ?? 0);
      expect('b' in frame).toBe(v.b !== undefined);
      if (v.b !== undefined) expect(withDefaults(frame.b, v.b)).toEqual(v.b);

      const again = encodeFrame(frame.t, frame.id, frame.b as Partial<MessageMap[MessageTypeName]> | undefined);
      expect(toHex(again)).toBe(v.hex);
    });
  }

  it('knows every error code the vectors use', () => {
    const known: readonly string[] = Object.values(ErrorCode);
    const used = vectors.filter((v) => v.t === 'error').map((v) => (v.b as { code: string }).code);
    expect(used).toContain('party_full');
    for (const code of used) expect(known, code).toContain(code);
  });

  it('encodes from the JSON form too', () => {
    for (const v of vectors) {
      const again = encodeFrame(v.t as MessageTypeName, v.id ?? 0, v.b as Partial<MessageMap[MessageTypeName]>);
      expect(toHex(again), v.name).toBe(v.hex);
    }
  });
});

describe('decoded defaults', () => {
  it('fills omitted fields with zero values', () => {
    const frame = decodeFrame(fromHex(vectors.find((v) => v.name === 'signal end of candidates')!.hex));
    expect(frame).toEqual({
      t: 'signal',
      id: 0,
      b: { to: 'p2', from: '', kind: 'candidate', sdp: '', cand: '', mid: '' },
    });
  });

  it('fills nested structs', () => {
    const frame = decodeFrame(encodeFrame('roomJoined', 3, {}));
    expect(frame.b).toEqual({
      room: { code: '', name: '', maxPlayers: 0, public: false, hasPassword: false, host: '', mode: '', started: false, migrate: false },
      you: '',
      players: [],
      ice: { servers: [], ttl: 0 },
    });
  });
});

describe('always-present fields', () => {
  it('writes room and ice even when empty', () => {
    expect(toHex(encodeFrame('roomJoined', 0, {}))).toBe(
      // {t: roomJoined, b: {room: {}, ice: {}}}
      '82a174aa726f6f6d4a6f696e6564a16282a4726f6f6d80a369636580',
    );
  });

  it('writes player even when empty', () => {
    expect(toHex(encodeFrame('playerJoined', 0, {}))).toBe('82a174ac706c617965724a6f696e6564a16281a6706c617965728' + '0');
  });
});
