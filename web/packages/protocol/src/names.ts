import { MAX_PLAYER_NAME } from './limits.js';
import { SKELETON_TABLE } from './skeleton-table.js';

// A port of protocol/names.go: what a player name or other line of text may
// hold, its normal form, and the skeletons the server compares names by.
// protocol/testdata/names.json holds vectors both sides test against. The
// server decides; these let a page say what is wrong before it asks.
//
// Unicode versions differ (Go's tables are 15.0, a browser's newer): a
// character assigned since 15.0 may pass here and be refused by the server
// as unassigned. Everything assigned by 15.0 gets the same answer.

const WHITE_SPACE_EDGES = /^\p{White_Space}+|\p{White_Space}+$/gu;

/** NFC with surrounding white space trimmed, like strings.TrimSpace (String.trim also drops U+FEFF). */
export function normalizeText(s: string): string {
  return s.normalize('NFC').replace(WHITE_SPACE_EDGES, '');
}

/** normalizeText with every run of space separators made one U+0020. */
export function normalizeName(s: string): string {
  return normalizeText(s).replace(/\p{Zs}+/gu, ' ');
}

/**
 * Why `name` (as normalizeName leaves it, which it applies first) is not a
 * valid player name, in the server's words ("contains an invisible character
 * (U+200B)"), or null.
 */
export function playerNameProblem(name: string): string | null {
  const n = normalizeName(name);
  return lengthProblem(n, MAX_PLAYER_NAME) ?? runesProblem(n, false);
}

/** Why `s` is not valid text for a room name, mode or chat line of at most `maxRunes`, or null. */
export function textProblem(s: string, maxRunes: number): string | null {
  const t = s.replace(WHITE_SPACE_EDGES, '');
  return lengthProblem(t, maxRunes) ?? runesProblem(t, true);
}

function lengthProblem(s: string, maxRunes: number): string | null {
  if (s === '') return 'is empty';
  if (/\p{Cs}/u.test(s)) return 'is not valid UTF-8'; // a lone surrogate
  if ([...s].length > maxRunes) return `is longer than ${maxRunes} characters`;
  return null;
}

type Kind = 'visible' | 'space' | 'selector' | 'joiner' | 'control' | 'bidi' | 'invisible' | 'private' | 'unassigned';

const ZWJ = 0x200d;

// Same order as runeKind in names.go: bidi controls and joiners are also Cf,
// and variation selectors are default-ignorable.
const KINDS: [RegExp, Kind][] = [
  [/\p{Cc}/u, 'control'],
  [/\p{Bidi_Control}/u, 'bidi'],
  [/\p{Join_Control}/u, 'joiner'],
  [/\p{Variation_Selector}/u, 'selector'],
  [/[\u2800\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u, 'invisible'],
  [/\p{Zs}/u, 'space'],
  [/\p{Co}/u, 'private'],
  [/[\p{Noncharacter_Code_Point}\p{Cn}]/u, 'unassigned'],
];

function kindOf(ch: string): Kind {
  for (const [re, kind] of KINDS) if (re.test(ch)) return kind;
  return 'visible';
}

const graphic = (ch: string | undefined): boolean => ch !== undefined && kindOf(ch) === 'visible';

/** Whether `before` ends in a symbol, maybe followed by variation selectors or emoji modifiers. */
function emojiBefore(before: string[]): boolean {
  for (let n = before.length - 1; n >= 0 && n >= before.length - 3; n--) {
    const ch = before[n] as string;
    if (/\p{So}/u.test(ch)) return true;
    const cp = ch.codePointAt(0) as number;
    if (/\p{Variation_Selector}/u.test(ch) || (cp >= 0x1f3fb && cp <= 0x1f3ff)) continue;
    return false;
  }
  return false;
}

const codePoint = (ch: string): string =>
  `U+${(ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;

function runesProblem(s: string, text: boolean): string | null {
  const runes = [...s];
  let visible = false;
  for (let i = 0; i < runes.length; i++) {
    const ch = runes[i] as string;
    const prev = runes[i - 1];
    const next = runes[i + 1];
    const kind = kindOf(ch);
    switch (kind) {
      case 'visible':
        visible = true;
        if (i === 0 && /\p{M}/u.test(ch)) return `starts with a combining mark (${codePoint(ch)})`;
        break;
      case 'space':
        break;
      case 'selector':
        if (!graphic(prev)) return `contains a variation selector with nothing to vary (${codePoint(ch)})`;
        break;
      case 'joiner': {
        const ok = text
          ? (graphic(prev) || emojiBefore(runes.slice(0, i))) && graphic(next)
          : ch.codePointAt(0) === ZWJ && emojiBefore(runes.slice(0, i)) && next !== undefined && /\p{So}/u.test(next);
        if (!ok) return `contains an invisible character (${codePoint(ch)})`;
        break;
      }
      case 'control':
        return 'contains a control character';
      case 'bidi':
        return `contains a bidirectional control character (${codePoint(ch)})`;
      case 'private':
        return `contains a private-use character (${codePoint(ch)})`;
      case 'unassigned':
        return `contains an unassigned character (${codePoint(ch)})`;
      default:
        return `contains an invisible character (${codePoint(ch)})`;
    }
  }
  return visible ? null : 'has no visible character';
}

/** The two keys the server compares names by (protocol.NameSkeleton). */
export interface NameSkeleton {
  /** The UTS #39 skeleton, lower-cased: what looks alike as written. */
  readonly shown: string;
  /** The skeleton with case set aside, as names were compared before skeletons. */
  readonly folded: string;
}

let table: Map<number, readonly [string, string]> | null = null;

// The table is parsed on first use: a page that only validates names never pays for it.
function skeletonTable(): Map<number, readonly [string, string]> {
  if (table) return table;
  const fromHex = (s: string): string =>
    s === '' ? '' : String.fromCodePoint(...s.split('.').map((h) => parseInt(h, 16)));
  table = new Map();
  for (const line of SKELETON_TABLE) {
    for (const entry of line.split(';')) {
      const [cp, shown, folded] = entry.split(':') as [string, string, string?];
      const s = fromHex(shown);
      table.set(parseInt(cp, 16), [s, folded === undefined ? s : fromHex(folded)]);
    }
  }
  return table;
}

const SKELETON_IGNORES = /[\u2800\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/** The skeletons of a name: NFD, each character through the table, NFD; default-ignorables dropped. */
export function nameSkeleton(name: string): NameSkeleton {
  const t = skeletonTable();
  let shown = '';
  let folded = '';
  for (const ch of name.normalize('NFD')) {
    if (SKELETON_IGNORES.test(ch)) continue;
    const e = t.get(ch.codePointAt(0) as number);
    shown += e ? e[0] : ch;
    folded += e ? e[1] : ch;
  }
  return { shown: shown.normalize('NFD'), folded: folded.normalize('NFD') };
}

/** Whether two names would pass for each other in a room (the server suffixes the second: "Ada (2)"). */
export function sameName(a: string, b: string): boolean {
  const x = nameSkeleton(a);
  const y = nameSkeleton(b);
  return x.shown === y.shown || x.folded === y.folded;
}
