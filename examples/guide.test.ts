// docs/guide.md teaches from the examples (Pong throughout, Tag in its
// Phaser section, the party game in "With React"). Every code block it marks with <!-- examples/… --> must
// still be in that file, and each example must use nothing of hostrelay's
// but the published packages.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const examples = fileURLToPath(new URL('.', import.meta.url));
const repo = resolve(examples, '..');

/**
 * Each example, the least the guide quotes of it, and what it may import
 * besides its own files (a package or a path in it: react-dom/client).
 */
const EXAMPLES = [
  { name: 'pong', quoted: 10, packages: ['@hostrelay/netcode', '@hostrelay/sdk'] },
  { name: 'phaser', quoted: 6, packages: ['@hostrelay/netcode', '@hostrelay/sdk', 'phaser'] },
  { name: 'react-lobby', quoted: 6, packages: ['@hostrelay/netcode', '@hostrelay/react', '@hostrelay/sdk', 'react', 'react-dom'] },
] as const;

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

  it.each(EXAMPLES.map((e) => [e.name, e] as const))('quotes examples/%s', (name, { quoted }) => {
    expect(blocks.filter((b) => b.file.startsWith(`examples/${name}/`)).length).toBeGreaterThanOrEqual(quoted);
  });

  it('quotes the examples as they are', () => {
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

describe.each(EXAMPLES.map((e) => [e.name, e] as const))('examples/%s', (name, { packages }) => {
  it(`imports nothing but its own files and ${packages.join(', ')}`, () => {
    const example = join(examples, name);
    const src = join(example, 'src');
    const files = readdirSync(src).filter((f) => /\.tsx?$/.test(f) && !/\.(test|d)\.ts$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) {
      for (const spec of imports(readFileSync(join(src, f), 'utf8'))) {
        const local = spec.startsWith('.') && resolve(src, spec).startsWith(src + sep);
        const published = (packages as readonly string[]).some((p) => spec === p || spec.startsWith(`${p}/`));
        expect(local || published, `${f} imports ${spec}`).toBe(true);
      }
    }
    const pkg = JSON.parse(readFileSync(join(example, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).sort()).toEqual([...packages]);
  });
});
