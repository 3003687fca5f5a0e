// The import graph of every TypeScript file tsconfig.json covers, resolved
// the way tsc resolves it, and two checks on it:
//
//   - no circle: no file reaches itself through its imports (type-only
//     imports included: a circle of types still ties the files together);
//   - layers: each part of the repository imports only the parts below it,
//     and those by package name, the way a game outside this repository
//     would. Under web/ the folder names read top-down: web/app (the lobby
//     app) imports web/games, which import web/packages (protocol ← sdk ←
//     netcode ← react); examples/ imports the packages as published, and each game
//     and example stands alone.
//
// `npm run check:imports` (part of `make vet`) runs both on the repository.
import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** A part of the repository: a package, a game, an example, the app, the tests around them. */
export interface Part {
  /** Its name in messages. */
  name: string;
  /** Where it lives, relative to the root, with '/' separators and no trailing slash. */
  dir: string;
  /** The parts it may import. */
  uses: readonly string[];
  /** The parts its tests (*.test.ts, *.test-util.ts) may import besides. */
  testUses?: readonly string[];
  /** It may import other parts by relative path (tests and tools that reach into the app's types). */
  relativeOk?: boolean;
  /** Each folder directly under `dir` stands alone: none imports another (the games, the examples). */
  units?: boolean;
}

export interface ImportEdge {
  from: string;
  to: string;
  specifier: string;
}

export interface ImportReport {
  files: number;
  edges: ImportEdge[];
  /** Each circle as the files around it, the first repeated at the end. */
  circles: string[][];
  /** One line per import that breaks the layering. */
  layering: string[];
}

const PACKAGES = ['protocol', 'sdk', 'netcode', 'react'].map((p) => `@hostrelay/${p}`);
const FUZZ = ['@hostrelay/fuzz'];

/** This repository's parts, lowest first: a part uses only parts listed before it. */
export const REPO_PARTS: readonly Part[] = [
  // web/packages: the bottom layer, the npm packages (fuzz: private, for their tests).
  { name: '@hostrelay/fuzz', dir: 'web/packages/fuzz', uses: [] },
  { name: '@hostrelay/protocol', dir: 'web/packages/protocol', uses: [], testUses: FUZZ },
  { name: '@hostrelay/sdk', dir: 'web/packages/sdk', uses: ['@hostrelay/protocol'], testUses: FUZZ },
  { name: '@hostrelay/netcode', dir: 'web/packages/netcode', uses: ['@hostrelay/protocol', '@hostrelay/sdk'], testUses: FUZZ },
  { name: '@hostrelay/react', dir: 'web/packages/react', uses: ['@hostrelay/sdk', '@hostrelay/netcode'] },
  // web/bundle: the script-tag SDK, the packages as one file for the relay to serve.
  { name: 'the script-tag bundle', dir: 'web/bundle', uses: PACKAGES },
  // web/games: the middle, each game built on the packages alone.
  { name: 'games', dir: 'web/games', uses: PACKAGES, testUses: FUZZ, units: true },
  // web/app: the top, the lobby app, on the games and the packages.
  { name: 'the lobby app', dir: 'web/app', uses: [...PACKAGES, 'games'], testUses: FUZZ },
  { name: 'web scripts', dir: 'web/scripts', uses: [] },
  // Beside web/: games written the way a user would (the packages as published), and the tests around it all.
  { name: 'examples', dir: 'examples', uses: PACKAGES, units: true },
  { name: 'e2e', dir: 'e2e', uses: ['the lobby app', 'games', 'examples', ...PACKAGES], relativeOk: true },
  { name: 'bench', dir: 'bench', uses: ['e2e', 'the lobby app'], relativeOk: true },
];

function isTestFile(path: string): boolean {
  return /\.(test|test-util|fuzz\.test|pack-test)\.ts$/.test(path);
}

/** The part a file belongs to: the longest matching dir (web/games/arena/… is in games). */
function partOf(parts: readonly Part[], file: string): Part | undefined {
  let best: Part | undefined;
  for (const p of parts) {
    if ((file === p.dir || file.startsWith(`${p.dir}/`)) && (!best || p.dir.length > best.dir.length)) best = p;
  }
  return best;
}

/** The game or example a file is in (web/games/arena, examples/pong), for the rule that they stay apart. */
function unitOf(part: Part, file: string): string | null {
  if (!part.units) return null;
  const m = /^[^/]+\//.exec(file.slice(part.dir.length + 1));
  return m ? `${part.dir}/${m[0].slice(0, -1)}` : null;
}

/** A part that uses one listed after it (or one not listed): the parts must be listed bottom-up. */
export function orderProblems(parts: readonly Part[]): string[] {
  const problems: string[] = [];
  parts.forEach((p, i) => {
    for (const used of [...p.uses, ...(p.testUses ?? [])]) {
      const at = parts.findIndex((q) => q.name === used);
      if (at < 0) problems.push(`${p.name} uses ${used}, which is no part`);
      else if (at >= i) problems.push(`${p.name} uses ${used}, which is not below it`);
    }
  });
  return problems;
}

/** Reads the graph under `root` from its tsconfig.json and checks it. */
export function checkImports(root: string, parts: readonly Part[] = REPO_PARTS, tsconfig = 'tsconfig.json'): ImportReport {
  const configPath = resolve(root, tsconfig);
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(`check-imports: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    },
  });
  if (!parsed) throw new Error(`check-imports: cannot read ${configPath}`);
  const rel = (abs: string): string => relative(root, abs).split(sep).join('/');
  const files = parsed.fileNames.filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'));
  const known = new Set(files.map((f) => resolve(f)));
  const edges: ImportEdge[] = [];
  const layering: string[] = orderProblems(parts).map((p) => `the parts' order: ${p}`);

  for (const file of files) {
    const from = rel(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      const resolved = ts.resolveModuleName(specifier, file, parsed.options, ts.sys).resolvedModule;
      if (!resolved || !known.has(resolve(resolved.resolvedFileName))) continue; // node: built-ins, node_modules
      const to = rel(resolved.resolvedFileName);
      edges.push({ from, to, specifier });
      const problem = layerProblem(parts, from, to, specifier);
      if (problem) layering.push(`${from}: imports ${specifier} (${to}): ${problem}`);
    }
  }
  return { files: files.length, edges, circles: circlesOf(edges), layering: layering.sort() };
}

function layerProblem(parts: readonly Part[], from: string, to: string, specifier: string): string | null {
  const a = partOf(parts, from);
  const b = partOf(parts, to);
  if (!a || !b) return null; // config files at the root
  const ua = unitOf(a, from);
  const ub = unitOf(b, to);
  if (a === b) {
    if (ua !== ub) return `${ua ?? a.name} may not import ${ub ?? b.name}: each game and example stands alone`;
    return null;
  }
  const allowed = a.uses.includes(b.name) || (isTestFile(from) && (a.testUses ?? []).includes(b.name));
  if (!allowed) return `${a.name} may not import ${b.name}`;
  if (specifier.startsWith('.') && !a.relativeOk) return `import ${b.name} by its package name, not by a path into it`;
  return null;
}

/**
 * Every circle in the graph: the strongly connected components with more
 * than one file (or a file importing itself), each as one path around it.
 */
export function circlesOf(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    const list = next.get(e.from) ?? [];
    list.push(e.to);
    next.set(e.from, list);
  }
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const targets = next.get(top.node) ?? [];
      if (top.i < targets.length) {
        const t = targets[top.i++]!;
        if (!index.has(t)) {
          index.set(t, counter);
          low.set(t, counter++);
          stack.push(t);
          onStack.add(t);
          work.push({ node: t, i: 0 });
        } else if (onStack.has(t)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(t)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          component.push(n);
        } while (n !== top.node);
        const selfLoop = (next.get(top.node) ?? []).includes(top.node);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }
  return components.map((c) => pathAround(new Set(c), next));
}

/** A walk from the component's first file (by name) back to itself, staying inside the component. */
function pathAround(members: Set<string>, next: Map<string, string[]>): string[] {
  const start = [...members].sort()[0]!;
  // Breadth-first from start to any file that imports start: the shortest circle through it.
  const prev = new Map<string, string>();
  const queue = [start];
  const seen = new Set([start]);
  for (let head = 0; head < queue.length; head++) {
    const n = queue[head]!;
    for (const t of next.get(n) ?? []) {
      if (!members.has(t)) continue;
      if (t === start) {
        // Walked back from n, then reversed: inserting at the front would cost n² on a long circle.
        const back: string[] = [];
        for (let at: string | undefined = n; at !== undefined && at !== start; at = prev.get(at)) back.push(at);
        return [start, ...back.reverse(), start];
      }
      if (!seen.has(t)) {
        seen.add(t);
        prev.set(t, n);
        queue.push(t);
      }
    }
  }
  return [start, start];
}
