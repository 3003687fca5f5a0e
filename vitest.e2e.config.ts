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
    // One more try for a test that failed. In full runs on a 2-core machine
    // two tests have failed now and then and pass alone: lobby-join's host
    // migration (the client's link to the new host never opened) and
    // reliability's (the autopilot box did not take a click). The failed try
    // still prints every page's state, its console (each peer connection's
    // steps, traced in the e2e build) and the server's log, so a flake stays
    // in the output while it is tracked down; a real failure fails both.
    retry: 1,
  },
});
