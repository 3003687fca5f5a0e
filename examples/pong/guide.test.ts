// docs/guide.md teaches from this example (and, in "With React", from
// examples/react-lobby). Every code block it marks with <!-- examples/… -->
// must still be in that file, and the example must use nothing of
// hostrelay's but the published packages.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const example = fileURLToPath(new URL('.', import.meta.url));
const repo = resolve(example, '../..');

/** The guide's marked blocks: the file each one quotes, and its code. */
function quotes(markdown: string): { file: string; code: string }[] {
  return [...markdown.matchAll(/^<!-- (examples\/\S+) -->\n```tsx?\n([\s\S]*?)^```$/gm)].map((m) => ({ file: m[1]!, code: m[2]! }));
}

/**
 * Checks that each piece of `code` (pieces are cut by `// …` lines) is a
 * run of consecutive lines of `source`, indentation aside, the pieces in
 * order. Returns the first piece that is not, or null.
 */
function missingPiece(code: string, source: string): string | null {
  const src = source.split('\n').map((l) => l.trim());
  let from = 0;
  for (const piece of code.split(/^[ \t]*\/\/ …\n/m)) {
    const lines = piece.replace(/\n+$/, '').split('\n').map((l) => l.trim());
    let at = -1;
    for (let i = from; i + lines.length <= src.length && at < 0; i++) {
      if (lines.every((l, k) => src[i + k] === l)) at = i;
    }
    if (at < 0) return piece;
    from = at + lines.length;
  }
  return null;
}

/** Module specifiers a TypeScript file imports. */
function imports(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

describe('docs/guide.md', () => {
  const blocks = quotes(readFileSync(join(repo, 'docs/guide.md'), 'utf8'));

  it('quotes the example as it is', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    expect(blocks.filter((b) => b.file.startsWith('examples/react-lobby/')).length, 'the React section').toBeGreaterThanOrEqual(6);
    for (const { file, code } of blocks) {
      const piece = missingPiece(code, readFileSync(join(repo, file), 'utf8'));
      expect(piece, `docs/guide.md quotes ${file}, which no longer has:\n${piece}`).toBeNull();
    }
  });

  it('would notice a quote that drifted', () => {
    const source = 'a();\n  b();\nc();\nd();\n';
    expect(missingPiece('a();\nb();\n', source)).toBeNull();
    expect(missingPiece('a();\n// …\nd();\n', source)).toBeNull();
    expect(missingPiece('a();\nc();\n', source)).toBe('a();\nc();\n'); // not consecutive
    expect(missingPiece('d();\n// …\na();\n', source)).toBe('a();\n'); // out of order
    expect(missingPiece('b(1);\n', source)).toBe('b(1);\n');
  });
});

describe('examples/pong', () => {
  it('imports nothing of hostrelay but @hostrelay/sdk and @hostrelay/netcode', () => {
    const src = join(example, 'src');
    const files = readdirSync(src).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) {
      for (const spec of imports(readFileSync(join(src, f), 'utf8'))) {
        const local = spec.startsWith('.') && resolve(src, spec).startsWith(src + sep);
        expect(local || spec === '@hostrelay/sdk' || spec === '@hostrelay/netcode', `${f} imports ${spec}`).toBe(true);
      }
    }
    const pkg = JSON.parse(readFileSync(join(example, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['@hostrelay/netcode', '@hostrelay/sdk']);
  });
});
