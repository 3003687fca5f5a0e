import { encode } from '@msgpack/msgpack';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { below, must, seededRandom } from '@hostrelay/fuzz';
import { decodeFrame, encodeFrame } from './envelope.js';
import { ErrorCode, Reason } from './errors.js';
import { kindOf } from './errors.test-util.js';
import { MAX_REGION, regionProblem } from './limits.js';
import type { MessageMap } from './messages.js';

// The cluster's fields (protocol/errors.go, messages.go, directory.go,
// validate.go): what a client reads from them, what an older server's frame
// without them decodes to, and the region label rule.

const golden = JSON.parse(
  readFileSync(new URL('../../../../protocol/testdata/golden.json', import.meta.url), 'utf8'),
) as { name: string; hex: string }[];
const vector = (name: string): Uint8Array => {
  const v = golden.find((x) => x.name === name);
  if (!v) throw new Error(`no golden vector ${name}`);
  return new Uint8Array(Buffer.from(v.hex, 'hex'));
};

describe('cluster fields', () => {
  it('reads where a room_elsewhere error points', () => {
    const frame = decodeFrame(vector('room elsewhere error'));
    expect(frame.t).toBe('error');
    const b = frame.b as MessageMap['error'];
    expect(b.code).toBe(ErrorCode.RoomElsewhere);
    expect(b.url).toBe('wss://b.example.com/ws');
    expect(b.region).toBe('eu-west');
  });

  it('decodes an older server’s frames with empty cluster fields', () => {
    expect(decodeFrame(encodeFrame('error', 3, { code: 'room_full', msg: 'full' })).b).toEqual({
      code: 'room_full',
      msg: 'full',
      url: '',
      region: '',
    });
    const welcome = decodeFrame(encodeFrame('welcome', 1, { v: 1, session: 's' })).b as MessageMap['welcome'];
    expect([welcome.node, welcome.region]).toEqual(['', '']);
    const list = decodeFrame(encode({ t: 'roomList', id: 2, b: { rooms: [{ code: 'ABC2345' }] } })).b as MessageMap['roomList'];
    expect(list.rooms[0]?.region).toBe('');
  });

  it('leaves an empty region off the wire, as Go’s omitempty does', () => {
    expect(encodeFrame('createRoom', 1, { name: 'r', region: '' })).toEqual(encodeFrame('createRoom', 1, { name: 'r' }));
  });

  it('refuses a url or region that is not a string', () => {
    expect(() => decodeFrame(encode({ t: 'error', b: { url: 7 } }))).toThrow(/error\.url is number, want string/);
    expect(kindOf(() => decodeFrame(encode({ t: 'welcome', b: { region: ['eu'] } })))).toBe('malformed');
    expect(() => decodeFrame(encode({ t: 'roomList', b: { rooms: [{ region: true }] } }))).toThrow(
      /roomList\.rooms\[0\]\.region is boolean, want string/,
    );
  });

  it('names room_lost as an error code and a close reason', () => {
    expect(ErrorCode.RoomLost).toBe('room_lost');
    expect(ErrorCode.Unavailable).toBe('unavailable');
    expect(Reason.RoomLost).toBe('room_lost');
  });
});

describe('regionProblem', () => {
  const cases: [string, string | null][] = [
    ['eu', null],
    ['eu-west', null],
    ['us.east_1', null],
    ['a'.repeat(MAX_REGION), null],
    ['', 'must be 1 to 32 bytes'],
    ['a'.repeat(MAX_REGION + 1), 'must be 1 to 32 bytes'],
    ['EU', "may hold only a-z, 0-9, '-', '_' and '.'"],
    ['eu west', "may hold only a-z, 0-9, '-', '_' and '.'"],
    ['eu/west', "may hold only a-z, 0-9, '-', '_' and '.'"],
    ['eu\n', "may hold only a-z, 0-9, '-', '_' and '.'"],
    ['é', "may hold only a-z, 0-9, '-', '_' and '.'"],
  ];
  for (const [region, want] of cases) {
    it(JSON.stringify(region), () => expect(regionProblem(region)).toBe(want));
  }

  it('agrees with a byte-by-byte reading of the rule on random labels', () => {
    // validate.go's loop, over UTF-8 bytes: a non-ASCII character must not
    // pass as a short label because it is one UTF-16 unit.
    const reference = (r: string): boolean => {
      const bytes = Buffer.from(r, 'utf8');
      if (bytes.length === 0 || bytes.length > MAX_REGION) return false;
      return bytes.every((c) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f || c === 0x2e);
    };
    const chars = ['a', 'z', '0', '9', '-', '_', '.', 'A', ' ', '/', ':', 'é', '🎮', '\u0000'];
    const rand = seededRandom(301);
    for (let i = 0; i < 3000; i++) {
      let r = '';
      for (let n = below(rand, MAX_REGION + 4); n > 0; n--) r += chars[rand() < 0.85 ? below(rand, 7) : below(rand, chars.length)];
      must((regionProblem(r) === null) === reference(r), `regionProblem(${JSON.stringify(r)})`);
    }
  });
});
