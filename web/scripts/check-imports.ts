// Fails if the repository's TypeScript imports form a circle or break the
// layering (web/scripts/imports.ts says which part may import which).
//
//   vite-node web/scripts/check-imports.ts
import { fileURLToPath } from 'node:url';
import { checkImports } from './imports';

const root = fileURLToPath(new URL('../..', import.meta.url));
const report = checkImports(root);
for (const c of report.circles) console.error(`check-imports: import circle: ${c.join(' → ')}`);
for (const l of report.layering) console.error(`check-imports: ${l}`);
if (report.circles.length > 0 || report.layering.length > 0) process.exit(1);
console.log(`check-imports: ${report.files} files, ${report.edges.length} imports: no circle, layering kept`);
