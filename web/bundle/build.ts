// Builds the script-tag SDK (web/bundle/index.ts) into static/sdk, which the
// Go binary embeds and serves at /sdk/<version>/ (server/sdk.go):
//
//   hostrelay.mjs (+ .map)   ES module:      import { LobbyClient } from '…/hostrelay.mjs'
//   hostrelay.js  (+ .map)   classic script: <script src="…/hostrelay.js"> → window.HostRelay
//   manifest.json            the version (the packages') and each file's size and SRI hash
//
//   vite-node web/bundle/build.ts        (part of `npm run build` and `npm run build:e2e`)
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = join(root, 'static/sdk');

/** The SDK bundles' metadata, read by the server (server/sdk.go) and served at /sdk/manifest.json. */
interface SdkManifest {
  /** The version of @hostrelay/sdk, @hostrelay/netcode and @hostrelay/protocol, which must agree. */
  version: string;
  /** The global the classic script defines. */
  global: string;
  files: Record<string, { bytes: number; integrity: string }>;
}

const GLOBAL_NAME = 'HostRelay';

/** The `integrity` attribute's value for these bytes (SRI, sha384). */
function integrity(bytes: Uint8Array): string {
  return `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
}

function packagesVersion(): string {
  const versions = ['protocol', 'sdk', 'netcode'].map((p) => {
    const pkg = JSON.parse(readFileSync(join(root, `web/packages/${p}/package.json`), 'utf8')) as { name: string; version: string };
    return [pkg.name, pkg.version] as const;
  });
  const distinct = new Set(versions.map(([, v]) => v));
  if (distinct.size !== 1) throw new Error(`build-sdk: the packages' versions differ (${versions.map((v) => v.join('@')).join(', ')}): the bundle has one`);
  return versions[0]![1];
}

/** "name version (license)" of each npm package outside this repository among the bundle's inputs. */
function thirdParty(inputs: readonly string[]): string {
  const dirs = new Set<string>();
  for (const input of inputs) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(m[1]!);
  }
  const notes = [...dirs].sort().map((dir) => {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
    return `${pkg.name} ${pkg.version} (${pkg.license ?? 'license not stated'})`;
  });
  return notes.length > 0 ? notes.join(', ') : 'no third-party code';
}

async function main(): Promise<void> {
  const version = packagesVersion();
  mkdirSync(out, { recursive: true });
  for (const f of readdirSync(out)) if (f !== '.gitkeep') rmSync(join(out, f), { recursive: true });
  const common: BuildOptions = {
    entryPoints: [join(root, 'web/bundle/index.ts')],
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    sourcesContent: true,
    target: 'es2022',
    platform: 'browser',
    // The packages' TypeScript sources, as everywhere in this repository (vite.config.ts).
    conditions: ['@hostrelay/source'],
    legalComments: 'eof',
    logLevel: 'warning',
  };
  // The notice names every package whose code is in the bundle, with its
  // license as its package.json states it: read from a first pass, never by hand.
  const { metafile } = await build({ ...common, format: 'esm', write: false, metafile: true, outfile: join(out, 'hostrelay.mjs') });
  const banner = `/*! hostrelay SDK ${version} (MIT; https://github.com/hostrelay/hostrelay). Includes ${thirdParty(Object.keys(metafile.inputs))} */`;
  common.banner = { js: banner };
  await build({ ...common, format: 'esm', outfile: join(out, 'hostrelay.mjs') });
  await build({ ...common, format: 'iife', globalName: GLOBAL_NAME, outfile: join(out, 'hostrelay.js') });

  const manifest: SdkManifest = { version, global: GLOBAL_NAME, files: {} };
  for (const name of ['hostrelay.mjs', 'hostrelay.mjs.map', 'hostrelay.js', 'hostrelay.js.map']) {
    const bytes = readFileSync(join(out, name));
    manifest.files[name] = { bytes: bytes.length, integrity: integrity(bytes) };
  }
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const sizes = Object.entries(manifest.files)
    .filter(([n]) => !n.endsWith('.map'))
    .map(([n, f]) => `${n} ${(f.bytes / 1024).toFixed(1)} KiB`);
  console.log(`build-sdk: static/sdk: SDK ${version}: ${sizes.join(', ')}`);
}

await main();
