import { defineConfig } from 'vitest/config';

// `npm run test:packages` (make test-packages): npm pack of every published
// package, installed from the tarballs into an empty project. Slow (npm and
// tsc run several times), so not part of `npm test`.
export default defineConfig({
  test: {
    include: ['web/packages/**/*.pack-test.ts'],
    environment: 'node',
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
});
