import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';
import { afterEach, describe, expect, it } from 'vitest';
import { NOTICES_FILE, allowedLicenses, thirdPartyNotices } from './web';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Builds a one-file app that bundles one npm package, dep, whose
 * package.json declares `license` (none when undefined), with the plugin as
 * vite.config.ts sets it up, and the allowed list from licenses/allowed.txt.
 * Returns the notices file, or throws what the build threw.
 */
async function buildWithDependency(license: string | undefined): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'hostrelay-licenses-'));
  dirs.push(root);
  mkdirSync(join(root, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  writeFileSync(join(root, 'main.js'), "import { hello } from 'dep';\nconsole.log(hello());\n");
  const pkg: Record<string, string> = { name: 'dep', version: '2.3.4', main: 'index.js' };
  if (license !== undefined) pkg.license = license;
  writeFileSync(join(root, 'node_modules', 'dep', 'package.json'), JSON.stringify(pkg));
  writeFileSync(join(root, 'node_modules', 'dep', 'index.js'), "export function hello() { return 'hi'; }\n");
  writeFileSync(join(root, 'node_modules', 'dep', 'LICENSE'), `The ${license ?? 'no'} license text of dep.\n`);
  const outDir = join(root, 'dist');
  await build({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [thirdPartyNotices(join(outDir, NOTICES_FILE))],
    build: { outDir, lib: { entry: join(root, 'main.js'), formats: ['es'], fileName: 'main' } },
  });
  return readFileSync(join(outDir, NOTICES_FILE), 'utf8');
}

describe('the web build license check', () => {
  it('reads the allowed list that make licenses gives go-licenses', () => {
    expect(allowedLicenses()).toBe('(MIT OR BSD-2-Clause OR BSD-3-Clause OR Apache-2.0 OR ISC)');
  });

  it('writes the notices of an allowed dependency', async () => {
    const notices = await buildWithDependency('MIT');
    expect(notices).toContain('\ndep 2.3.4\nLicense: MIT\n\n-- LICENSE\n\nThe MIT license text of dep.');
  });

  it('admits an SPDX expression with an allowed choice', async () => {
    expect(await buildWithDependency('(MIT OR GPL-3.0-or-later)')).toContain('License: (MIT OR GPL-3.0-or-later)');
  });

  for (const license of ['GPL-3.0-only', 'AGPL-3.0-or-later', 'LGPL-2.1-only', 'MPL-2.0', 'SEE LICENSE IN LICENSE', undefined]) {
    it(`fails the build on a dependency licensed ${license ?? '(none)'}`, async () => {
      await expect(buildWithDependency(license)).rejects.toThrow(/Dependency "dep" (does not specify any license|has a license .* not compatible)/);
    });
  }
});
