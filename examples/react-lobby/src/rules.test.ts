import { describe, expect, it } from 'vitest';
import { DOT_ID, DotMatch, H, inputCodec, POINTS_TO_WIN, W, type DotInput } from './rules';

const at = (x: number, y: number, clicks: number): DotInput => ({ x, y, clicks });

describe('catch the dot', () => {
  it('scores a new click on the dot and moves the dot', () => {
    const m = new DotMatch(7);
    m.join('a', 0);
    const dot = m.dotAt;
    m.step(new Map([['a', at(dot.x, dot.y, 0)]])); // the first input only sets the count
    m.step(new Map([['a', at(dot.x, dot.y, 1)]]));
    const a = m.capture().find(([id]) => id === 0)![1];
    expect(a.score).toBe(1);
    expect(m.dotAt).not.toEqual(dot);
  });

  it('does not score the same click twice, a click beside the dot, or a click it never saw begin', () => {
    const m = new DotMatch(7);
    m.join('a', 0);
    const { x, y } = m.dotAt;
    m.step(new Map([['a', at(x, y, 5)]]));
    m.step(new Map([['a', at(x, y, 5)]])); // repeated input
    m.step(new Map([['a', at(x + 40, y, 6)]])); // missed
    expect(m.capture().find(([id]) => id === 0)![1].score).toBe(0);
  });

  it('starts a new round when someone reaches POINTS_TO_WIN', () => {
    const m = new DotMatch(3);
    m.join('a', 0);
    m.join('b', 1);
    m.step(new Map([['a', at(0, 0, 0)], ['b', at(0, 0, 0)]]));
    for (let c = 1; c <= POINTS_TO_WIN; c++) {
      const { x, y } = m.dotAt;
      m.step(new Map([['a', at(x, y, c)]]));
    }
    const e = new Map(m.capture());
    expect(e.get(0)!.score).toBe(0);
    expect(e.get(DOT_ID)!.score).toBe(1);
  });

  it('decodes any five bytes to an input on the field', () => {
    const buf = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff]);
    expect(inputCodec.read(buf, 0)).toEqual({ x: W, y: H, clicks: 255 });
    const out = new Uint8Array(5);
    inputCodec.write(at(123, 45, 300), out, 0);
    expect(inputCodec.read(out, 0)).toEqual(at(123, 45, 300 & 0xff));
  });
});
