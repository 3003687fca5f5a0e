// The published packages as a game developer gets them: `npm pack` of
// @hostrelay/protocol, sdk and netcode (prepack builds each), the tarballs
// installed into an empty project outside the repository, and there every
// package README's TypeScript examples plus a consumer of all three are
// type-checked with tsc --strict (NodeNext and Bundler resolution, our .d.ts
// not skipped) and imported by Node. Our own packages come only from the
// tarballs; @msgpack/msgpack comes from the npm cache (or the registry).
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(repo, 'node_modules/typescript/bin/tsc');
const PACKAGES = ['protocol', 'sdk', 'netcode'] as const;
type Name = (typeof PACKAGES)[number];

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
}

let work = '';
let consumer = '';
const tarballs = new Map<Name, string>();

/** Runs a command; on failure the error carries its whole output. */
function run(cmd: string, args: string[], cwd: string): string {
  // The npm that runs this test passes its settings down in npm_config_*;
  // workspace ones would make the consumer's npm look for workspaces.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_(workspace|include_workspace)/i.test(k)));
  const opts: ExecFileSyncOptions = { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 };
  try {
    return execFileSync(cmd, args, opts) as string;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** The ```ts blocks of a README, each a whole module. */
function examples(readme: string): string[] {
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

/** Module specifiers a JS or .d.ts file imports or re-exports. */
function specifiers(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? '');
}

const installed = (name: Name): string => join(consumer, 'node_modules/@hostrelay', name);

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'hostrelay-pack-'));
  const packed = join(work, 'tarballs');
  mkdirSync(packed);
  run('npm', ['pack', '--pack-destination', packed, ...PACKAGES.flatMap((p) => ['-w', `@hostrelay/${p}`])], repo);
  for (const p of PACKAGES) tarballs.set(p, join(packed, `hostrelay-${p}-0.1.0.tgz`));

  consumer = join(work, 'game');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'my-game', private: true, type: 'module' }, null, 2));
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...PACKAGES.map((p) => tarballs.get(p)!)], consumer);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.each(PACKAGES)('@hostrelay/%s', (name) => {
  it('packs its build, types, sources and README, and no tests', () => {
    const entries = run('tar', ['-tzf', tarballs.get(name)!], work).split('\n').filter(Boolean);
    for (const want of ['package/package.json', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/src/index.ts']) {
      expect(entries).toContain(want);
    }
    expect(entries.filter((e) => /\.test\.|\.test-util\.|tsbuildinfo/.test(e))).toEqual([]);
  });

  it('imports only its own files and its declared dependencies', () => {
    const dir = installed(name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const deps = Object.keys(manifest.dependencies ?? {});
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

describe('an empty project with the three tarballs installed', () => {
  beforeAll(() => {
    for (const name of PACKAGES) {
      examples(readFileSync(join(repo, 'web/packages', name, 'README.md'), 'utf8')).forEach((code, i) => {
        writeFileSync(join(consumer, `readme-${name}-${i + 1}.ts`), code);
      });
    }
    writeFileSync(join(consumer, 'consumer.ts'), CONSUMER);
    const base = {
      target: 'ES2022',
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: [],
    };
    writeFileSync(
      join(consumer, 'tsconfig.nodenext.json'),
      JSON.stringify({ compilerOptions: { ...base, module: 'NodeNext', moduleResolution: 'NodeNext' }, include: ['*.ts'] }),
    );
    writeFileSync(
      join(consumer, 'tsconfig.bundler.json'),
      JSON.stringify({ compilerOptions: { ...base, module: 'ESNext', moduleResolution: 'Bundler' }, include: ['*.ts'] }),
    );
  });

  it('has every README example to check', () => {
    for (const name of PACKAGES) {
      expect(readdirSync(consumer).filter((f) => f.startsWith(`readme-${name}-`)).length, name).toBeGreaterThan(0);
    }
  });

  it.each(['nodenext', 'bundler'])('type-checks the README examples and a consumer with tsc --strict (%s resolution)', (mode) => {
    run(process.execPath, [tsc, '-p', `tsconfig.${mode}.json`], consumer);
  });

  it('imports all three in Node', () => {
    const out = run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as protocol from '@hostrelay/protocol';
         import * as sdk from '@hostrelay/sdk';
         import * as netcode from '@hostrelay/netcode';
         const frame = protocol.encodeFrame('hello', 1, { name: 'Ada' });
         console.log(JSON.stringify({
           roundTrip: protocol.decodeFrame(frame).t,
           sdk: [typeof sdk.LobbyClient, typeof sdk.RoomSession, typeof sdk.backoff],
           netcode: [typeof netcode.NetHost, typeof netcode.NetClient, typeof netcode.Schema],
         }));`,
      ],
      consumer,
    );
    expect(JSON.parse(out)).toEqual({
      roundTrip: 'hello',
      sdk: ['function', 'function', 'function'],
      netcode: ['function', 'function', 'function'],
    });
  });
});

/**
 * The three packages' types are one set wherever a consumer meets them: the
 * sdk's RoomSummary is the protocol's, and the RoomSession of the sdk is what
 * the netcode's sessionTransport takes. A second copy of a package, or a type
 * the .d.ts cannot resolve, fails here.
 */
const CONSUMER = `import { decodeFrame, encodeFrame, type Frame, type RoomSummary } from '@hostrelay/protocol';
import { LobbyClient, RoomDirectory, RoomSession, type RoomSummary as ListedRoom } from '@hostrelay/sdk';
import { sessionTransport, type NetTransport } from '@hostrelay/netcode';

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
`;
