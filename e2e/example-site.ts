import { existsSync, mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { launchBrowser } from './browser';
import { serverBinary, startServer, type RunningServer } from './server';
import { serveStatic, type StaticServer } from './static-server';

/**
 * An example game as its developer would host it: its folder served from a
 * static server of its own (another origin than the relay's), the real relay
 * started with -allowed-origins for that origin, one browser per test file
 * and a fresh context per player. A failing test saves every open page's
 * screenshot to `<shots>/failed-<label>.png` and prints what the page
 * publishes for its test (`state`), its console and the relay's last log lines.
 */
export interface ExampleSite {
  /** The page's origin, http://127.0.0.1:PORT. */
  readonly origin: string;
  /** The relay's address, http://127.0.0.1:PORT. */
  readonly relayUrl: string;
  /** The page's URL with ?relay= naming the relay. */
  readonly start: string;
  /** Opens a player's page in a context of its own. */
  open(label: string, options?: BrowserContextOptions): Promise<Page>;
}

/**
 * `dir` is what to serve (an example's folder, or its dist/: run `make
 * examples` first); `state` reads the page's test hook, printed on failure.
 */
export function useExampleSite(name: string, dir: string, shots: string, state: (page: Page) => Promise<unknown>): ExampleSite {
  let site: StaticServer | undefined;
  let relay: RunningServer | undefined;
  let browser: Browser | undefined;
  let contexts: BrowserContext[] = [];
  let pages: { label: string; page: Page; log: string[] }[] = [];

  beforeAll(async () => {
    if (!existsSync(`${dir}/index.html`)) throw new Error(`no ${dir}/index.html: run \`make examples\` first`);
    site = await serveStatic(dir);
    relay = await startServer(serverBinary(), ['-allowed-origins', new URL(site.origin).host]);
    browser = await launchBrowser();
    mkdirSync(shots, { recursive: true });
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      for (const { label, page, log } of pages) {
        if (page.isClosed()) continue;
        await page.screenshot({ path: `${shots}/failed-${label}.png` }).catch(() => undefined);
        const s = await state(page).catch(() => null);
        process.stderr.write(`--- ${label}: ${JSON.stringify(s ?? null)}\n${log.join('\n')}\n`);
      }
      process.stderr.write(`--- relay log (last 40 lines)\n${relay?.logs.slice(-40).join('\n')}\n`);
    }
    for (const c of contexts) await c.close().catch(() => undefined);
    contexts = [];
    pages = [];
  });

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await site?.close();
  });

  const started = <T>(what: T | undefined): T => {
    if (what === undefined) throw new Error(`${name}: the site, relay or browser is not started`);
    return what;
  };
  return {
    get origin() {
      return started(site).origin;
    },
    get relayUrl() {
      return `http://${started(relay).http}`;
    },
    get start() {
      return `${started(site).origin}/?relay=${encodeURIComponent(`http://${started(relay).http}`)}`;
    },
    async open(label, options = {}) {
      const context = await started(browser).newContext(options);
      contexts.push(context);
      const page = await context.newPage();
      const log: string[] = [];
      page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
      page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
      pages.push({ label, page, log });
      return page;
    },
  };
}
