import { defineConfig } from 'vitest/config';

// Unit tests sit beside the code under web/. The end-to-end suite has its own
// config (vitest.e2e.config.ts) because it needs the server binary and Chromium.
export default defineConfig({
  test: {
    include: ['web/**/*.test.ts'],
    environment: 'node',
  },
});
