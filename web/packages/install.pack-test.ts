// The published packages as a game developer gets them: `npm pack` of
// @hostrelay/protocol, sdk, netcode and react (prepack builds each), the
// tarballs installed into an empty project outside the repository, and there
// every package README's TypeScript (and TSX) examples plus a consumer of all
// four are type-checked with tsc --strict (NodeNext and Bundler resolution,
// our .d.ts not skipped) and imported by Node, and examples/react-lobby is
// bundled there by Vite. Our own packages come only from the tarballs; @msgpack/msgpack, and react with its types for
// @hostrelay/react's peer dependency, come from the npm cache (or the registry).
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(repo, 'node_modules/typescript/bin/tsc');
const PACKAGES = ['protocol', 'sdk', 'netcode', 'react'] as const;
/** What @hostrelay/react's peer dependencies are met with in the consumer. */
const REACT = ['react@^19.3.1', 'react-dom@^19.3.1', '@types/react@^19.3.3'];
type Name = (typeof PACKAGES)[number];

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

let work = '';
let consumer = '';
const tarballs = new Map<Name, string>();

/**
 * Runs a command; on failure the error carries its whole output. Not
 * execFileSync: tsc takes tens of seconds on a busy machine, and a worker
 * blocked that long misses vitest's own RPC deadline.
 */
function run(cmd: string, args: string[], cwd: string): Promise<string> {
  // The npm that runs this test passes its settings down in npm_config_*;
  // workspace ones would make the consumer's npm look for workspaces.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_(workspace|include_workspace)/i.test(k)));
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed in ${cwd}: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** The ```ts and ```tsx blocks of a README, each a whole module. */
function examples(readme: string): { code: string; ext: 'ts' | 'tsx' }[] {
  return [...readme.matchAll(/^```(tsx?)\n([\s\S]*?)^```$/gm)].map((m) => ({ code: m[2] ?? '', ext: m[1] === 'tsx' ? 'tsx' : 'ts' }));
}

/** Module specifiers a JS or .d.ts file imports or re-exports. */
function specifiers(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? '');
}

const installed = (name: Name): string => join(consumer, 'node_modules/@hostrelay', name);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'hostrelay-pack-'));
  const packed = join(work, 'tarballs');
  mkdirSync(packed);
  await run('npm', ['pack', '--pack-destination', packed, ...PACKAGES.flatMap((p) => ['-w', `@hostrelay/${p}`])], repo);
  for (const p of PACKAGES) tarballs.set(p, join(packed, `hostrelay-${p}-0.1.0.tgz`));

  consumer = join(work, 'game');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'my-game', private: true, type: 'module' }, null, 2));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...PACKAGES.map((p) => tarballs.get(p)!), ...REACT], consumer);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.each(PACKAGES)('@hostrelay/%s', (name) => {
  it('packs its build, types, sources and README, and no tests', async () => {
    const entries = (await run('tar', ['-tzf', tarballs.get(name)!], work)).split('\n').filter(Boolean);
    for (const want of ['package/package.json', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/src/index.ts']) {
      expect(entries).toContain(want);
    }
    expect(entries.filter((e) => /\.test\.|\.test-util\.|tsbuildinfo/.test(e))).toEqual([]);
  });

  it('imports only its own files and its declared dependencies', () => {
    const dir = installed(name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const deps = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
    const dist = join(dir, 'dist');
    const outside: string[] = [];
    for (const file of filesUnder(dist).filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        const where = `${relative(dir, file)}: ${spec}`;
        if (spec.startsWith('.')) {
          // NodeNext resolution needs the extension; the target must be in the package.
          const target = resolve(dirname(file), spec);
          if (!/\.js$/.test(spec) || !target.startsWith(dist + sep)) outside.push(where);
        } else if (!deps.some((d) => spec === d || spec.startsWith(`${d}/`))) {
          outside.push(where);
        }
      }
    }
    expect(outside).toEqual([]);
    if (name === 'netcode') expect(deps).toEqual(['@hostrelay/sdk']);
    if (name === 'react') expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['@hostrelay/netcode', '@hostrelay/sdk']);
  });

  it('has no `any` in its public types', () => {
    const found: string[] = [];
    for (const file of filesUnder(join(installed(name), 'dist')).filter((f) => f.endsWith('.d.ts'))) {
      // Comments are prose ("any player"); only code counts.
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
      code.split('\n').forEach((line, i) => {
        if (/\bany\b/.test(line)) found.push(`${relative(installed(name), file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });
});

describe('an empty project with the four tarballs installed', () => {
  beforeAll(() => {
    for (const name of PACKAGES) {
      examples(readFileSync(join(repo, 'web/packages', name, 'README.md'), 'utf8')).forEach(({ code, ext }, i) => {
        writeFileSync(join(consumer, `readme-${name}-${i + 1}.${ext}`), code);
      });
    }
    writeFileSync(join(consumer, 'consumer.ts'), CONSUMER);
    const base = {
      target: 'ES2022',
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      jsx: 'react-jsx',
      types: [],
    };
    writeFileSync(
      join(consumer, 'tsconfig.nodenext.json'),
      JSON.stringify({ compilerOptions: { ...base, module: 'NodeNext', moduleResolution: 'NodeNext' }, include: ['*.ts', '*.tsx'] }),
    );
    writeFileSync(
      join(consumer, 'tsconfig.bundler.json'),
      JSON.stringify({ compilerOptions: { ...base, module: 'ESNext', moduleResolution: 'Bundler' }, include: ['*.ts', '*.tsx'] }),
    );
  });

  it('has every README example to check', () => {
    for (const name of PACKAGES) {
      expect(readdirSync(consumer).filter((f) => f.startsWith(`readme-${name}-`)).length, name).toBeGreaterThan(0);
    }
  });

  it.each(['nodenext', 'bundler'])('type-checks the README examples and a consumer with tsc --strict (%s resolution)', async (mode) => {
    await run(process.execPath, [tsc, '-p', `tsconfig.${mode}.json`], consumer);
  });

  it('imports all four in Node', async () => {
    const out = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as protocol from '@hostrelay/protocol';
         import * as sdk from '@hostrelay/sdk';
         import * as netcode from '@hostrelay/netcode';
         import * as react from '@hostrelay/react';
         const frame = protocol.encodeFrame('hello', 1, { name: 'Ada' });
         console.log(JSON.stringify({
           roundTrip: protocol.decodeFrame(frame).t,
           sdk: [typeof sdk.LobbyClient, typeof sdk.RoomSession, typeof sdk.backoff],
           netcode: [typeof netcode.NetHost, typeof netcode.NetClient, typeof netcode.Schema],
           react: [typeof react.useLobby, typeof react.useRoom, typeof react.useNetHost],
         }));`,
      ],
      consumer,
    );
    expect(JSON.parse(out)).toEqual({
      roundTrip: 'hello',
      sdk: ['function', 'function', 'function'],
      netcode: ['function', 'function', 'function'],
      react: ['function', 'function', 'function'],
    });
  });
});

describe('examples/react-lobby built from the tarballs', () => {
  it('bundles with Vite, every @hostrelay module and React from the consumer’s node_modules', async () => {
    // The example's page and sources, as a game developer's project would
    // hold them, in the project that installed the tarballs.
    const app = join(consumer, 'react-lobby');
    for (const part of ['index.html', 'src']) cpSync(join(repo, 'examples/react-lobby', part), join(app, part), { recursive: true });
    const from = new Set<string>();
    await build({
      configFile: false,
      logLevel: 'warn',
      root: app,
      base: './',
      esbuild: { jsx: 'automatic' },
      build: { outDir: join(app, 'dist'), target: 'es2022' },
      plugins: [
        {
          name: 'where-from',
          load(id) {
            // CommonJS modules (React's) come through as virtual ids too: "\0<path>?commonjs-…".
            const path = id.replace(/^\0/, '');
            const m = /[\\/]node_modules[\\/]((?:@hostrelay[\\/])?[^\\/]+)[\\/]/.exec(path);
            if (m) from.add(`${m[1]!.replace('\\', '/')} ${path.startsWith(consumer + sep) ? 'consumer' : `elsewhere: ${path}`}`);
            return null;
          },
        },
      ],
    });
    expect(existsSync(join(app, 'dist/index.html'))).toBe(true);
    expect([...from].filter((f) => f.startsWith('@hostrelay/') || f.startsWith('react')).sort()).toEqual([
      '@hostrelay/netcode consumer',
      '@hostrelay/protocol consumer',
      '@hostrelay/react consumer',
      '@hostrelay/sdk consumer',
      'react consumer',
      'react-dom consumer',
    ]);
  });
});

/**
 * The four packages' types are one set wherever a consumer meets them: the
 * sdk's RoomSummary is the protocol's, the RoomSession of the sdk is what
 * the netcode's sessionTransport takes, and the react hooks hand out the
 * sdk's RoomSession and the netcode's NetHost. A second copy of a package,
 * or a type the .d.ts cannot resolve, fails here.
 */
const CONSUMER = `import { decodeFrame, encodeFrame, type Frame, type RoomSummary } from '@hostrelay/protocol';
import { LobbyClient, RoomDirectory, RoomSession, type RoomSummary as ListedRoom } from '@hostrelay/sdk';
import { buttonsCodec, Schema, sessionTransport, type Buttons, type NetHost, type NetTransport } from '@hostrelay/netcode';
import { useNetHost, useRoom } from '@hostrelay/react';

const frame: Frame = decodeFrame(encodeFrame('hello', 1, { name: 'Ada' }));
export const helloName: string | undefined = frame.t === 'hello' ? frame.b?.name : undefined;

export async function firstRoom(url: string): Promise<[RoomSummary, ListedRoom] | null> {
  const lobby = await LobbyClient.connect(url, 'Ada');
  const rooms: readonly RoomSummary[] = (await RoomDirectory.watch(lobby)).rooms;
  const first = rooms[0];
  return first ? [first, first] : null;
}

export function transportOf(room: RoomSession): NetTransport {
  return sessionTransport(room);
}

const game = { schema: Schema.define({ x: {} }), input: buttonsCodec(['fire'] as const) };

export function useHosting(code: string): [RoomSession | null, NetHost<Buttons<'fire'>, 'x'> | null] {
  const room = useRoom(code);
  const host = useNetHost({ game, step: () => undefined, capture: () => [] }, room.session);
  return [room.session, host];
}
`;
