import { existsSync, mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { launchBrowser } from './browser';
import { serverBinary, startServer, type RunningServer } from './server';
import { serveStatic, type StaticServer } from './static-server';

/**
 * A page hosted apart from the relay, as a game developer hosts theirs: a
 * folder served on an origin of its own, a relay that lets that origin in
 * (-allowed-origins), and one browser for the test file.
 */
export interface ExampleSite {
  /** http://127.0.0.1:PORT of the static site. */
  readonly origin: string;
  readonly relay: RunningServer;
  /** The relay's address, http://127.0.0.1:PORT. */
  readonly relayUrl: string;
  /** The page's URL with ?relay= naming the relay. */
  readonly start: string;
  /**
   * A page in a fresh browser context (fresh storage), not yet navigated;
   * `init` runs on the context first (an init script, say).
   */
  open(label: string, options?: BrowserContextOptions, init?: (context: BrowserContext) => Promise<unknown>): Promise<Page>;
}

export interface ExampleSiteOptions {
  /** Where a failed test's screenshots go. */
  shots: string;
  /** What a failed test prints of each page (its window.<state>). */
  state: (page: Page) => Promise<unknown>;
  /** More relay flags. */
  serverArgs?: readonly string[];
}

/**
 * Starts the site, the relay and the browser before the file's tests (the
 * folder may be built first: `dir` may be a function that returns it) and
 * stops them after. Each test's contexts are closed after it; a failed test
 * saves every open page's screenshot to `<shots>/failed-<label>.png` and
 * prints its state, its console and the relay's last log lines.
 */
export function useExampleSite(dir: string | (() => Promise<string>), opts: ExampleSiteOptions): ExampleSite {
  let site: StaticServer | undefined;
  let relay: RunningServer | undefined;
  let browser: Browser | undefined;
  let contexts: BrowserContext[] = [];
  let pages: { label: string; page: Page; log: string[] }[] = [];

  beforeAll(async () => {
    // A folder named here is an example's build; one a function returns is built by the test itself.
    if (typeof dir === 'string' && !existsSync(`${dir}/index.html`)) throw new Error(`no ${dir}/index.html: run \`make examples\` first`);
    site = await serveStatic(typeof dir === 'string' ? dir : await dir());
    relay = await startServer(serverBinary(), ['-allowed-origins', new URL(site.origin).host, ...(opts.serverArgs ?? [])]);
    browser = await launchBrowser();
    mkdirSync(opts.shots, { recursive: true });
  }, 120_000);

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      for (const { label, page, log } of pages) {
        if (page.isClosed()) continue;
        await page.screenshot({ path: `${opts.shots}/failed-${label}.png` }).catch(() => undefined);
        const state = await opts.state(page).catch(() => null);
        process.stderr.write(`--- ${label}: state ${JSON.stringify(state)}\n${log.join('\n')}\n`);
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

  return {
    get origin() {
      if (!site) throw new Error('example site: not started');
      return site.origin;
    },
    get relay() {
      if (!relay) throw new Error('example site: relay not started');
      return relay;
    },
    get relayUrl() {
      return `http://${this.relay.http}`;
    },
    get start() {
      return `${this.origin}/?relay=${encodeURIComponent(this.relayUrl)}`;
    },
    async open(label, options = {}, init) {
      if (!browser) throw new Error('example site: browser not started');
      const context = await browser.newContext(options);
      contexts.push(context);
      await init?.(context);
      const page = await context.newPage();
      const log: string[] = [];
      page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
      page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
      pages.push({ label, page, log });
      return page;
    },
  };
}
