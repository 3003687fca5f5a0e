import { defineConfig } from 'vitest/config';

// End-to-end tests start bin/hostrelay and drive Chromium: slow setup, and
// one browser per file, so files run one at a time.
export default defineConfig({
  test: {
    include: ['e2e/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
