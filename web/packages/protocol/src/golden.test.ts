import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame } from './envelope.js';
import { ErrorCode } from './errors.js';
import { MAX_FRAME, MAX_SPECTATOR_DATA } from './limits.js';
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
  // them in. Compare after dropping the decoder's zero values. Go's JSON
  // writes a []byte as base64, so bytes become base64 here too.
  const replacer = (_k: string, v: unknown): unknown =>
    isZero(v) ? undefined : v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v;
  const dropped = JSON.parse(JSON.stringify(frameBody, replacer)) as unknown;
  // A struct left with only zero fields (welcome's ice when there is none)
  // is left out too, as Go omits a nil pointer; the body itself stays.
  const empty = (_k: string, v: unknown): unknown =>
    _k !== '' && typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0 ? undefined : v;
  return (dropped === undefined ? undefined : JSON.parse(JSON.stringify(dropped, empty))) ?? vectorBody;
}

function isZero(v: unknown): boolean {
  return (
    v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0) || (v instanceof Uint8Array && v.length === 0)
  );
}

// The JSON form's base64 `data` (spectatorFrame, the only bytes field) back
// to the bytes the codec takes.
function fromJSON(t: string, b: unknown): unknown {
  if (t !== 'spectatorFrame' || typeof b !== 'object' || b === null) return b;
  const { data, ...rest } = b as { data?: string };
  return data === undefined ? rest : { ...rest, data: new Uint8Array(Buffer.from(data, 'base64')) };
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
    expect(used).toEqual(expect.arrayContaining(['party_full', 'room_elsewhere', 'room_lost']));
    expect(vectors.map((v) => v.t)).toEqual(expect.arrayContaining(['spectate', 'spectating', 'spectatorFrame']));
    for (const code of used) expect(known, code).toContain(code);
  });

  it('encodes from the JSON form too', () => {
    for (const v of vectors) {
      const body = fromJSON(v.t, v.b) as Partial<MessageMap[MessageTypeName]> | undefined;
      const again = encodeFrame(v.t as MessageTypeName, v.id ?? 0, body);
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
      room: { code: '', name: '', maxPlayers: 0, public: false, hasPassword: false, host: '', mode: '', started: false, migrate: false, spectators: 0, membersOnly: false },
      you: '',
      players: [],
      ice: { servers: [], ttl: 0 },
    });
  });
});

describe('spectator frames', () => {
  it('decodes data as bytes, not a string', () => {
    const frame = decodeFrame(fromHex(vectors.find((v) => v.name === 'spectator keyframe from host')!.hex));
    expect(frame.t).toBe('spectatorFrame');
    const b = frame.b as MessageMap['spectatorFrame'];
    expect(b.key).toBe(true);
    expect(b.data).toBeInstanceOf(Uint8Array);
    expect([...b.data]).toEqual([1, 2, 3, 0xff]);
  });

  it('refuses a string where bytes belong', () => {
    // {t: spectatorFrame, b: {data: "abc"}}: a str8 where Go wants bin.
    const bytes = new Uint8Array([0x82, 0xa1, 0x74, 0xae, ...Buffer.from('spectatorFrame'), 0xa1, 0x62, 0x81, 0xa4, ...Buffer.from('data'), 0xa3, 0x61, 0x62, 0x63]);
    expect(() => decodeFrame(bytes)).toThrow(/spectatorFrame\.data is string, want bin/);
  });

  it('encodes data at MAX_SPECTATOR_DATA within MAX_FRAME', () => {
    const frame = encodeFrame('spectatorFrame', 0, { key: true, data: new Uint8Array(MAX_SPECTATOR_DATA) });
    expect(frame.length).toBeLessThanOrEqual(MAX_FRAME);
    expect(() => encodeFrame('spectatorFrame', 0, { data: new Uint8Array(MAX_FRAME) })).toThrow(/too large/);
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
