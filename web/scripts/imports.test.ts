import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_PARTS, checkImports, circlesOf, orderProblems, type Part } from './imports';

// Small repositories on disk, read the way the real one is: from a
// tsconfig.json, each import resolved by tsc's own resolution.
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'imports-'));
  roots.push(root);
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', noEmit: true }, include: ['.'] }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const PARTS: Part[] = [
  { name: 'sdk', dir: 'sdk', uses: [] },
  { name: 'games', dir: 'games', uses: ['sdk'], units: true },
  { name: 'app', dir: 'app', uses: ['sdk', 'games'] },
];

describe('checkImports', () => {
  it('finds the circle the lobby app once had (game-mount ↔ pointer-game)', () => {
    const root = repo({
      'app/game-mount.ts': "import { mountPointer } from './pointer-game';\nexport interface GameHandle { dispose(): void }\nexport const m = mountPointer;\n",
      'app/pointer-game.ts': "import type { GameHandle } from './game-mount';\nexport function mountPointer(): GameHandle { return { dispose() {} }; }\n",
      'app/main.ts': "import { m } from './game-mount';\nm();\n",
    });
    const report = checkImports(root, PARTS);
    expect(report.circles).toEqual([['app/game-mount.ts', 'app/pointer-game.ts', 'app/game-mount.ts']]);
    expect(report.layering).toEqual([]);
  });

  it('finds a circle through three files and one importing itself', () => {
    const root = repo({
      'app/a.ts': "import './b';\n",
      'app/b.ts': "import './c';\n",
      'app/c.ts': "import './a';\n",
      'app/self.ts': "import './self';\n",
      'app/ok.ts': "import './a';\n",
    });
    const circles = checkImports(root, PARTS).circles.sort((x, y) => x.length - y.length);
    expect(circles).toEqual([
      ['app/self.ts', 'app/self.ts'],
      ['app/a.ts', 'app/b.ts', 'app/c.ts', 'app/a.ts'],
    ]);
  });

  it('passes a clean graph', () => {
    const root = repo({
      'sdk/index.ts': 'export const x = 1;\n',
      'games/arena/index.ts': "import { x } from '../../sdk/index';\nexport const y = x;\n",
    });
    const parts: Part[] = PARTS.map((p) => (p.name === 'games' ? { ...p, relativeOk: true } : p));
    const report = checkImports(root, parts);
    expect(report).toMatchObject({ files: 2, circles: [], layering: [] });
    expect(report.edges).toHaveLength(1);
  });

  it('refuses an import against the layers, one by path into another part, and one game importing another', () => {
    const root = repo({
      'sdk/index.ts': "import { y } from '../games/arena/index';\nexport const x = y;\n",
      'games/arena/index.ts': 'export const y = 1;\n',
      'games/pong/index.ts': "import { y } from '../arena/index';\nexport const z = y;\n",
      'app/main.ts': "import { z } from '../games/pong/index';\nexport const w = z;\n",
    });
    expect(checkImports(root, PARTS).layering).toEqual([
      'app/main.ts: imports ../games/pong/index (games/pong/index.ts): import games by its package name, not by a path into it',
      'games/pong/index.ts: imports ../arena/index (games/arena/index.ts): games/pong may not import games/arena: each game and example stands alone',
      'sdk/index.ts: imports ../games/arena/index (games/arena/index.ts): sdk may not import games',
    ]);
  });

  it('lets tests use their extra parts, and only tests', () => {
    const parts: Part[] = [
      { name: 'fuzz', dir: 'fuzz', uses: [] },
      { name: 'sdk', dir: 'sdk', uses: [], testUses: ['fuzz'], relativeOk: true },
    ];
    const root = repo({
      'fuzz/index.ts': 'export const f = 1;\n',
      'sdk/a.test.ts': "import { f } from '../fuzz/index';\nexport const t = f;\n",
      'sdk/a.ts': "import { f } from '../fuzz/index';\nexport const u = f;\n",
    });
    expect(checkImports(root, parts).layering).toEqual(['sdk/a.ts: imports ../fuzz/index (fuzz/index.ts): sdk may not import fuzz']);
  });
});

describe("this repository's layers", () => {
  it('read top-down under web/: a game may not import the app, nor a package a game', () => {
    const root = repo({
      'web/packages/sdk/src/index.ts': "import { arena } from '../../../games/arena/src/index';\nexport const sdk = arena;\n",
      'web/games/arena/src/index.ts': "import { app } from '../../../app/main';\nexport const arena = app;\n",
      'web/games/duel/src/index.ts': "import { arena } from '../../arena/src/index';\nexport const duel = arena;\n",
      'web/app/main.ts': 'export const app = 1;\n',
    });
    expect(checkImports(root, REPO_PARTS).layering).toEqual([
      'web/games/arena/src/index.ts: imports ../../../app/main (web/app/main.ts): games may not import the lobby app',
      'web/games/duel/src/index.ts: imports ../../arena/src/index (web/games/arena/src/index.ts): web/games/duel may not import web/games/arena: each game and example stands alone',
      'web/packages/sdk/src/index.ts: imports ../../../games/arena/src/index (web/games/arena/src/index.ts): @hostrelay/sdk may not import games',
    ]);
  });

  it('are listed bottom-up', () => {
    expect(orderProblems(REPO_PARTS)).toEqual([]);
    const upsideDown: Part[] = [
      { name: 'app', dir: 'app', uses: ['games'] },
      { name: 'games', dir: 'games', uses: ['sdk', 'nowhere'] },
      { name: 'sdk', dir: 'sdk', uses: [] },
    ];
    expect(orderProblems(upsideDown)).toEqual([
      'app uses games, which is not below it',
      'games uses sdk, which is not below it',
      'games uses nowhere, which is no part',
    ]);
  });
});

describe('circlesOf', () => {
  it('walks a long chain without overflowing the stack', () => {
    const n = 100_000;
    const edges = Array.from({ length: n }, (_, i) => ({ from: `f${i}`, to: `f${i + 1}`, specifier: '' }));
    expect(circlesOf(edges)).toEqual([]);
    edges.push({ from: `f${n}`, to: 'f0', specifier: '' });
    const circles = circlesOf(edges);
    expect(circles).toHaveLength(1);
    expect(circles[0]).toHaveLength(n + 2);
  });
});
