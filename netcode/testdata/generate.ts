// Writes vectors.json from the TypeScript netcode (its wire format is the
// contract; netcode's Go tests decode and encode these bytes):
//
//   npx vite-node netcode/testdata/generate.ts
//
// web/packages/netcode/src/wire/go-vectors.test.ts fails when the TypeScript
// output no longer matches this file; regenerate it on purpose only.
import { writeFileSync } from 'node:fs';
import { buildVectors } from '../../web/packages/netcode/src/wire/go-vectors.test-util';

const path = new URL('./vectors.json', import.meta.url);
writeFileSync(path, `${JSON.stringify(buildVectors(), null, 1)}\n`);
console.log(`wrote ${path.pathname}`);
