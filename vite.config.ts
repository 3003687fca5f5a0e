import { fileURLToPath } from 'node:url';
import { defaultClientConditions, defaultServerConditions, defineConfig, type UserConfig } from 'vite';
import { NOTICES_FILE, thirdPartyNotices } from './licenses/web';

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
// absolute URLs (base '/'). The admin page (admin.html, admin/) is a second
// entry in the same build, served at /admin when the server has an admin
// token; it shares style.css and nothing else with the lobby app.
//
// `vite build --mode e2e` is the end-to-end tests' build, into static/e2e
// (embedded by `go build -tags e2e`): only there is import.meta.env.MODE
// 'e2e', so only there do the test hooks (window.hostrelayTest and
// window.hostrelayGame), TestTraffic and CuttableTransport exist; the
// production bundle drops them as dead code (make web checks it does).
//
// The build writes THIRD-PARTY-NOTICES.txt beside index.html, the notices of
// the npm packages bundled in, and fails on a package whose license is
// unknown or not in licenses/allowed.txt (licenses/web.ts).
export default defineConfig(({ mode }) => {
  const outDir = fileURLToPath(new URL(mode === 'e2e' ? './static/e2e' : './static/dist', import.meta.url));
  return {
    ...workspaceSources,
    root: fileURLToPath(new URL('./web/app', import.meta.url)),
    base: '/',
    plugins: [thirdPartyNotices(`${outDir}/${NOTICES_FILE}`)],
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: true,
      rollupOptions: {
        input: {
          index: fileURLToPath(new URL('./web/app/index.html', import.meta.url)),
          admin: fileURLToPath(new URL('./web/app/admin.html', import.meta.url)),
        },
      },
    },
  };
});
