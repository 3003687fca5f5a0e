import { defineConfig } from 'vite';

// A plain Vite app, run from this folder (`npm run build -w hostrelay-example-react-lobby`),
// as examples/pong's: no "@hostrelay/source" condition, so the @hostrelay
// packages resolve to their built dist/ as an npm install would give them
// (`make examples` builds them first). JSX goes through esbuild's automatic
// runtime: no React plugin needed for a build. base './' serves the page from any path.
export default defineConfig({
  base: './',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
});
