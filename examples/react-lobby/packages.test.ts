// The example is a game developer's own project: it uses nothing of
// hostrelay's but the published packages (docs/guide.md's drift check for
// its quotes is examples/pong/guide.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const example = fileURLToPath(new URL('.', import.meta.url));
const PACKAGES = ['@hostrelay/netcode', '@hostrelay/react', '@hostrelay/sdk'];

describe('examples/react-lobby', () => {
  it('imports nothing of hostrelay but @hostrelay/react, sdk and netcode', () => {
    const src = join(example, 'src');
    const files = readdirSync(src).filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const f of files) {
      const code = readFileSync(join(src, f), 'utf8');
      for (const [, spec] of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)) {
        const local = spec!.startsWith('.') && resolve(src, spec!).startsWith(src + sep);
        expect(local || PACKAGES.includes(spec!) || /^react(-dom)?(\/|$)/.test(spec!), `${f} imports ${spec}`).toBe(true);
      }
    }
    const pkg = JSON.parse(readFileSync(join(example, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).sort()).toEqual([...PACKAGES, 'react', 'react-dom']);
  });
});
