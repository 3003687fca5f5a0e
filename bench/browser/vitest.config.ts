import { defineConfig } from 'vitest/config';

// `make bench` only (bench/cmd/benchrun runs it against a pinned server).
export default defineConfig({
  test: {
    include: ['bench/browser/**/*.bench-test.ts'],
    environment: 'node',
    testTimeout: 300_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
