import { defineConfig } from 'vite';

// A plain Vite app, run from this folder (`npm run build -w hostrelay-example-phaser`),
// built like examples/pong: `@hostrelay/sdk` and `@hostrelay/netcode` resolve
// to their built dist/ as an npm install would give them (`make examples`
// builds them first), and base './' lets the page be served from any path.
//
// Phaser is most of the bytes (1.2 MB minified, 332 kB gzipped, against
// 108 kB and 35 kB for the game, the SDK, the netcode and MessagePack): it gets a chunk of its own,
// which a browser keeps cached across releases of the game, and the size
// warning is set above it so that only a chunk that outgrows Phaser warns.
export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 1400,
    rollupOptions: {
      output: {
        manualChunks: (id) => (id.includes('/node_modules/phaser/') ? 'phaser' : undefined),
      },
    },
  },
});
