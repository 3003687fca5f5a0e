import { fileURLToPath } from 'node:url';
import { defaultClientConditions, defaultServerConditions, defineConfig, type UserConfig } from 'vite';

/**
 * The @hostrelay/* workspace packages resolve to their TypeScript sources
 * here (their package.json's "@hostrelay/source" export condition, also in
 * tsconfig.json), so the app, the unit tests and vite-node need no package
 * build first. Outside this repository the same imports get dist/.
 */
export const workspaceSources = {
  resolve: { conditions: ['@hostrelay/source', ...defaultClientConditions] },
  ssr: { resolve: { conditions: ['@hostrelay/source', ...defaultServerConditions] } },
} satisfies UserConfig;

// The lobby app lives in web/app; its build is embedded into the Go binary
// from static/dist, which serves it at / and at /r/<code>, so assets need
// absolute URLs (base '/').
export default defineConfig({
  ...workspaceSources,
  root: fileURLToPath(new URL('./web/app', import.meta.url)),
  base: '/',
  build: {
    outDir: fileURLToPath(new URL('./static/dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
});
