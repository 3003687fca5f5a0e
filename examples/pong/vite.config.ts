import { defineConfig } from 'vite';

// A plain Vite app, run from this folder (`npm run build -w hostrelay-example-pong`).
// Unlike the repository's root vite.config.ts it does not set the
// "@hostrelay/source" condition, so `@hostrelay/sdk` and `@hostrelay/netcode`
// resolve to their built dist/ as an npm install would give them: the build
// proves the packages work as shipped (`make examples` builds them first).
// base './' lets the page be served from any path.
export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
});
