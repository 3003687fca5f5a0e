// Checks that the lobby app's production build holds no test code, and
// that the e2e build does (so the markers below are real and the absence
// check cannot pass by looking for the wrong thing).
//
//   vite-node web/scripts/check-bundle.ts -- production static/dist
//   vite-node web/scripts/check-bundle.ts -- e2e static/e2e
//
// A test module is found two ways: by a marker in the scripts, a string
// that minification keeps (a string literal or a property name) and only
// that module has; and by its path among the source maps' sources, which
// list every module that put code in the bundle.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const TEST_MODULES: readonly { what: string; module: string; marker: string }[] = [
  { what: 'CuttableTransport', module: 'web/app/cuttable-transport.ts', marker: 'network cut' },
  { what: 'TestTraffic', module: 'web/app/test-traffic.ts', marker: 'testsReceived' },
  { what: 'the lobby page test hooks', module: 'web/app/test-hooks.ts', marker: 'hostrelayTest' },
  { what: 'the arena test hooks', module: 'web/games/arena/src/test-hooks.ts', marker: 'hostrelayGame' },
  { what: 'the pointer demo test hooks', module: 'web/games/pointer/src/test-hooks.ts', marker: 'hostrelayPointer' },
  { what: 'the duel test hooks', module: 'web/games/duel/src/test-hooks.ts', marker: 'hostrelayDuel' },
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

const [build, dir] = process.argv.slice(2);
if ((build !== 'production' && build !== 'e2e') || dir === undefined) {
  console.error('usage: check-bundle.ts production|e2e <dir>');
  process.exit(2);
}
const files = filesUnder(dir);
const scripts = files.filter((f) => f.endsWith('.js')).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
const sources = files
  .filter((f) => f.endsWith('.js.map'))
  .flatMap((path) => (JSON.parse(readFileSync(path, 'utf8')) as { sources: string[] }).sources.map((source) => ({ path, source })));
if (scripts.length === 0 || sources.length === 0) {
  console.error(`check-bundle: no scripts or source maps under ${dir}: build it first`);
  process.exit(1);
}

const problems: string[] = [];
// The Go server embeds both pages: the lobby at / and the admin page at /admin.
for (const page of ['index.html', 'admin.html']) {
  if (!files.some((f) => relative(dir, f) === page)) problems.push(`${page} is missing from the ${build} build`);
}
for (const { what, module, marker } of TEST_MODULES) {
  const inScripts = scripts.filter((f) => f.text.includes(marker)).map((f) => relative(dir, f.path));
  const inMaps = sources.filter((s) => s.source.endsWith(module)).map((s) => relative(dir, s.path));
  if (build === 'production') {
    if (inScripts.length > 0) problems.push(`${what} (${module}) is in the production build: "${marker}" in ${inScripts.join(', ')}`);
    if (inMaps.length > 0) problems.push(`${what} (${module}) is in the production build: a source of ${inMaps.join(', ')}`);
  } else {
    if (inScripts.length === 0) problems.push(`${what} (${module}) is missing from the e2e build: no "${marker}" in its scripts`);
    if (inMaps.length === 0) problems.push(`${what} (${module}) is missing from the e2e build: not among its sources`);
  }
}
if (problems.length > 0) {
  for (const p of problems) console.error(`check-bundle: ${p}`);
  process.exit(1);
}
console.log(
  `check-bundle: ${build} build in ${dir}: ${TEST_MODULES.length} test modules ${build === 'production' ? 'absent' : 'present'}`,
);
