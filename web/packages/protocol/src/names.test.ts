import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_CHAT_TEXT } from './limits.js';
import { nameSkeleton, normalizeName, normalizeText, playerNameProblem, sameName, textProblem } from './names.js';

// protocol/testdata/names.json is written by the Go tests (protocol.TestNameVectors
// -update): the same input must get the same verdict, reason, normal form and
// skeletons here.

interface NameVector {
  name: string;
  in: string;
  text?: boolean;
  ok: boolean;
  reason?: string;
  normalized: string;
  shown: string;
  folded: string;
}

const vectors = JSON.parse(
  readFileSync(new URL('../../../../protocol/testdata/names.json', import.meta.url), 'utf8'),
) as NameVector[];

describe('name vectors shared with Go', () => {
  it('has vectors', () => {
    expect(vectors.length).toBeGreaterThan(30);
  });
  for (const v of vectors) {
    it(v.name, () => {
      const normalized = v.text ? normalizeText(v.in) : normalizeName(v.in);
      expect(normalized).toBe(v.normalized);
      const problem = v.text ? textProblem(normalized, MAX_CHAT_TEXT) : playerNameProblem(normalized);
      expect(problem).toBe(v.ok ? null : v.reason);
      expect(nameSkeleton(normalized)).toEqual({ shown: v.shown, folded: v.folded });
    });
  }
});

describe('sameName', () => {
  it('puts look-alikes together and keeps different names apart', () => {
    for (const [a, b] of [
      ['Host', 'host'],
      ['Host', 'H\u043est'],
      ['HOST', '\u041d\u041e\u0405\u0422'],
      ['Host', '\uff28\uff4f\uff53\uff54'],
      ['Host', 'Host\u200b'],
      ['Ian', 'lan'],
      ['Ian', 'ian'],
      ['Bob', 'B0b'],
      ['modern', 'rnodern'],
    ] as const) {
      expect(sameName(a, b), `${a} ~ ${b}`).toBe(true);
    }
    for (const [a, b] of [
      ['Ada', 'Ida'],
      ['Kyle', 'Kule'],
      ['ian', 'lan'],
      ['Neo', 'Veo'],
    ] as const) {
      expect(sameName(a, b), `${a} !~ ${b}`).toBe(false);
    }
  });
});

describe('normalizeText', () => {
  it('trims what Go trims, not U+FEFF, which the rules refuse instead', () => {
    expect(normalizeText('\u00a0 Ada \u3000')).toBe('Ada');
    expect(normalizeText('Ada\ufeff')).toBe('Ada\ufeff');
    expect(playerNameProblem(normalizeName('Ada\ufeff'))).toBe('contains an invisible character (U+FEFF)');
  });
});
