import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The lobby app lives in web/app; its build is embedded into the Go binary
// from static/dist, which serves it at / and at /r/<code>, so assets need
// absolute URLs (base '/').
export default defineConfig({
  root: fileURLToPath(new URL('./web/app', import.meta.url)),
  base: '/',
  build: {
    outDir: fileURLToPath(new URL('./static/dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
});
