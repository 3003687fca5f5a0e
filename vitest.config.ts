import { defineConfig } from 'vitest/config';
import { workspaceSources } from './vite.config';

// Unit tests sit beside the code under web/, examples/ and licenses/. The end-to-end suite has its own
// config (vitest.e2e.config.ts) because it needs the server binary and Chromium;
// so does the packages' pack-and-install test (web/packages/vitest.config.ts).
export default defineConfig({
  ...workspaceSources,
  test: {
    include: ['web/**/*.test.ts', 'examples/**/*.test.ts', 'licenses/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    environment: 'node',
  },
});
