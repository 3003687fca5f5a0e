import { encode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame } from './envelope.js';
import type { ProtocolErrorKind } from './errors.js';
import { kindOf } from './errors.test-util.js';
import { MAX_FRAME } from './limits.js';

const hex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));


describe('decodeFrame refuses hostile input', () => {
  const cases: [string, string, ProtocolErrorKind][] = [
    ['array32 claiming 4 billion elements', 'ddffffffff', 'malformed'],
    ['map32 claiming 4 billion pairs', 'dfffffffff', 'malformed'],
    ['str32 claiming 4 GiB', 'dbffffffff', 'malformed'],
    ['truncated map', '82a174a26f6b', 'malformed'],
    ['trailing bytes', '81a174a26f6bc0', 'malformed'],
    ['extension type', 'd40100', 'malformed'],
    ['reserved byte', 'c1', 'malformed'],
    ['empty input', '', 'malformed'],
    ['not a map', '93010203', 'malformed'],
    ['no type', '81a26964 01'.replace(' ', ''), 'no_type'],
    ['type is not a string', '81a17401', 'malformed'],
    ['negative id', '82a174a26f6ba26964ff', 'malformed'],
    ['unknown type', '81a174a3666f6f', 'unknown_type'],
    ['nesting too deep', '81a162' + '91'.repeat(8) + 'c0', 'too_deep'],
  ];
  for (const [name, h, kind] of cases) {
    it(name, () => expect(kindOf(() => decodeFrame(hex(h)))).toBe(kind));
  }

  it('refuses frames over MAX_FRAME', () => {
    expect(kindOf(() => decodeFrame(new Uint8Array(MAX_FRAME + 1)))).toBe('too_large');
  });

  it('refuses a body field of the wrong type', () => {
    const frame = encode({ t: 'hello', id: 1, b: { v: 'one', name: 'Ada' } });
    expect(() => decodeFrame(frame)).toThrow(/hello\.v is string, want integer/);
  });

  it('refuses a list that is not a list', () => {
    const frame = encode({ t: 'roomJoined', b: { players: { id: 'p1' } } });
    expect(() => decodeFrame(frame)).toThrow(/roomJoined\.players is object, want array/);
  });

  it('skips unknown fields and treats nil as zero', () => {
    const frame = encode({ t: 'playerLeft', b: { id: null, reason: 'left', extra: [1, 2] } });
    expect(decodeFrame(frame)).toEqual({ t: 'playerLeft', id: 0, b: { id: '', reason: 'left' } });
  });

  it('accepts nesting up to MAX_DEPTH', () => {
    // envelope, body, then 6 arrays in an unknown field: 8 containers
    expect(kindOf(() => decodeFrame(hex('82a174a26f6ba16281a178' + '91'.repeat(5) + '90')))).toBe('none');
    expect(kindOf(() => decodeFrame(hex('82a174a26f6ba16281a178' + '91'.repeat(6) + '90')))).toBe('too_deep');
  });
});

describe('encodeFrame', () => {
  it('refuses frames over MAX_FRAME', () => {
    expect(kindOf(() => encodeFrame('signal', 1, { to: 'p1', kind: 'offer', sdp: 'x'.repeat(MAX_FRAME) }))).toBe(
      'too_large',
    );
  });

  it('refuses an id that is not a uint32', () => {
    expect(kindOf(() => encodeFrame('leaveRoom', 2 ** 32))).toBe('malformed');
    expect(kindOf(() => encodeFrame('leaveRoom', -1))).toBe('malformed');
  });

  it('omits zero values', () => {
    const frame = encodeFrame('createRoom', 1, { name: 'r', maxPlayers: 0, public: false, password: '' });
    expect(decodeFrame(frame)).toEqual({
      t: 'createRoom',
      id: 1,
      b: { name: 'r', maxPlayers: 0, public: false, password: '', mode: '', migrate: false, region: '', membersOnly: false },
    });
    expect(frame.length).toBe(encodeFrame('createRoom', 1, { name: 'r' }).length);
  });
});
