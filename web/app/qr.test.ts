import qrcode from 'qrcode-generator';
import { describe, expect, it } from 'vitest';
import { qrDataUrl } from './qr';

// The share QR must say the room link, not merely be a QR code. The test
// reads the modules back out of the SVG and decodes them (small codes, one
// block), and for longer links compares them with the library's own matrix.

const CELL = 4;
const MARGIN = 2;

/** The dark modules of the SVG in a data URL, as rows of booleans. */
function modulesOf(url: string): boolean[][] {
  const prefix = 'data:image/svg+xml;charset=utf-8,';
  expect(url.startsWith(prefix)).toBe(true);
  const svg = decodeURIComponent(url.slice(prefix.length));
  const box = /viewBox="0 0 (\d+) (\d+)"/.exec(svg);
  expect(box?.[1]).toBe(box?.[2]);
  const n = (Number(box![1]) - 2 * MARGIN) / CELL;
  expect(Number.isInteger(n) && n >= 21 && (n - 17) % 4 === 0).toBe(true);
  const m = Array.from({ length: n }, () => Array<boolean>(n).fill(false));
  for (const [, x, y] of svg.matchAll(/M(\d+),(\d+)l4,0 0,4 -4,0 0,-4z/g)) {
    m[(Number(y) - MARGIN) / CELL]![(Number(x) - MARGIN) / CELL] = true;
  }
  return m;
}

const MASKS: ((x: number, y: number) => boolean)[] = [
  (x, y) => (x + y) % 2 === 0,
  (_x, y) => y % 2 === 0,
  (x) => x % 3 === 0,
  (x, y) => (x + y) % 3 === 0,
  (x, y) => (Math.floor(x / 3) + Math.floor(y / 2)) % 2 === 0,
  (x, y) => ((x * y) % 2) + ((x * y) % 3) === 0,
  (x, y) => (((x * y) % 2) + ((x * y) % 3)) % 2 === 0,
  (x, y) => (((x + y) % 2) + ((x * y) % 3)) % 2 === 0,
];

/** Error correction levels by their two format bits. */
const LEVELS = ['M', 'L', 'H', 'Q'] as const;

/**
 * Decodes a byte-mode QR code of versions 1–3 whose data is one block
 * (every level of versions 1–2, L and M of version 3), per ISO/IEC 18004.
 * Assumes no damaged modules: it reads, it does not correct.
 */
function decodeSmallQr(m: boolean[][]): { level: string; text: string } {
  const n = m.length;
  const version = (n - 17) / 4;
  const at = (x: number, y: number): boolean => m[y]![x]!;

  // Format information around the top-left finder, BCH-checked.
  let format = 0;
  const formatCells: [number, number][] = [];
  for (let i = 0; i <= 5; i++) formatCells.push([8, i]);
  formatCells.push([8, 7], [8, 8], [7, 8]);
  for (let i = 9; i < 15; i++) formatCells.push([14 - i, 8]);
  formatCells.forEach(([x, y], i) => (format |= (at(x, y) ? 1 : 0) << i));
  format ^= 0x5412;
  const data = format >>> 10;
  let rem = data;
  for (let i = 0; i < 10; i++) rem = (rem << 1) ^ ((rem >>> 9) * 0x537);
  expect((data << 10) | rem, 'format information').toBe(format);
  const level = LEVELS[data >>> 3]!;
  const mask = MASKS[data & 7]!;
  expect(version <= 2 || (version === 3 && (level === 'L' || level === 'M')), `version ${version}-${level} has one block`).toBe(true);

  // Finders with separators and format areas, timing lines, the one alignment pattern.
  const fn = (x: number, y: number): boolean =>
    (x <= 8 && y <= 8) ||
    (x >= n - 8 && y <= 8) ||
    (x <= 8 && y >= n - 8) ||
    x === 6 ||
    y === 6 ||
    (version >= 2 && Math.abs(x - (n - 7)) <= 2 && Math.abs(y - (n - 7)) <= 2);

  const bits: number[] = [];
  for (let right = n - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    const upward = ((right + 1) & 2) === 0;
    for (let v = 0; v < n; v++) {
      const y = upward ? n - 1 - v : v;
      for (const x of [right, right - 1]) if (!fn(x, y)) bits.push(at(x, y) !== mask(x, y) ? 1 : 0);
    }
  }
  let pos = 0;
  const read = (k: number): number => {
    let v = 0;
    for (let i = 0; i < k; i++) v = (v << 1) | bits[pos++]!;
    return v;
  };
  expect(read(4), 'byte mode').toBe(0b0100);
  const length = read(8);
  const bytes = Uint8Array.from({ length }, () => read(8));
  return { level, text: new TextDecoder().decode(bytes) };
}

function libraryModules(text: string): boolean[][] {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  return Array.from({ length: n }, (_, r) => Array.from({ length: n }, (_, c) => qr.isDark(r, c)));
}

describe('qrDataUrl', () => {
  const links = ['https://relay.example/r/ABC2345', 'http://localhost:8080/r/XYZ9876', 'https://hostrelay.example.org/r/K7M2P9Q'];

  for (const link of links) {
    it(`encodes ${link} at medium error correction`, () => {
      expect(decodeSmallQr(modulesOf(qrDataUrl(link)))).toEqual({ level: 'M', text: link });
    });
  }

  it('differs for a link one character away', () => {
    const [a, b] = ['https://relay.example/r/ABC2345', 'https://relay.example/r/ABC2346'].map((l) => decodeSmallQr(modulesOf(qrDataUrl(l))).text);
    expect(a).not.toBe(b);
  });

  it('draws the same modules as qrcode-generator for a link too long for the small decoder', () => {
    const link = `https://relay.example/r/ABC2345?name=${'a'.repeat(60)}`;
    expect(modulesOf(qrDataUrl(link))).toEqual(libraryModules(link));
    expect(modulesOf(qrDataUrl(link))).not.toEqual(libraryModules(`${link}b`));
  });
});
