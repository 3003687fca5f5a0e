import { readFileSync } from 'node:fs';
import license, { type Dependency } from 'rollup-plugin-license';
import type { Plugin } from 'vite';

/** The file the web app's build writes beside index.html; the server embeds and serves it (/licenses). */
export const NOTICES_FILE = 'THIRD-PARTY-NOTICES.txt';

/**
 * The SPDX identifiers in licenses/allowed.txt (the list make licenses
 * gives go-licenses) as one SPDX expression: (MIT OR ISC OR …).
 */
export function allowedLicenses(file = new URL('./allowed.txt', import.meta.url)): string {
  const ids = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  if (ids.length === 0) throw new Error(`licenses: ${String(file)} lists no license`);
  return `(${ids.join(' OR ')})`;
}

/**
 * Writes the notices of every npm package bundled into the output (its name,
 * version, license, license text and NOTICE) to outFile, and fails the build
 * when one has no license or one that `allow` (an SPDX expression) does not
 * admit. Packages of this repository (@hostrelay/*, MIT) are checked but not
 * listed: they are hostrelay itself.
 */
export function thirdPartyNotices(outFile: string, allow = allowedLicenses()): Plugin {
  return license({
    thirdParty: {
      includePrivate: false,
      multipleVersions: true,
      allow: { test: allow, failOnUnlicensed: true, failOnViolation: true },
      output: { file: outFile, template: renderNotices },
    },
  }) as Plugin;
}

const rule = '='.repeat(80);

/** The notices file: a header, then one entry per third-party package. */
export function renderNotices(dependencies: Dependency[]): string {
  const thirdParty = dependencies
    .filter((d) => !(d.name ?? '').startsWith('@hostrelay/'))
    .sort((a, b) => `${a.name}@${a.version}`.localeCompare(`${b.name}@${b.version}`));
  let out =
    'Third-party software in the hostrelay web app (the lobby and admin pages built into the\n' +
    'server binary): every npm package bundled into it, with its license and notices as the\n' +
    'package ships them, found by rollup-plugin-license at build time.\n';
  if (thirdParty.length === 0) out += '\nNone.\n';
  for (const d of thirdParty) {
    out += `\n${rule}\n${d.name} ${d.version}\nLicense: ${d.license}\n`;
    if (d.licenseText) out += `\n-- LICENSE\n\n${d.licenseText.trimEnd()}\n`;
    if (d.noticeText) out += `\n-- NOTICE\n\n${d.noticeText.trimEnd()}\n`;
  }
  return out;
}
