import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { launchBrowser } from './browser';
import { stateOf } from './page-state';
import { serverBinary, startServer, type RunningServer } from './server';

/**
 * One server and one browser per test file, a fresh context (so fresh
 * localStorage) per player. A failing test saves every open page's
 * screenshot to test-results/<file>-<player>.png and prints its state,
 * console and the server's last log lines.
 */
export interface Harness {
  /** http://127.0.0.1:PORT (https:// with `https`) */
  readonly base: string;
  readonly server: RunningServer;
  /**
   * Opens a player's page; `name` pre-sets the remembered player name;
   * `phone` makes the context a touch phone (touch events, no mouse hover,
   * the page's meta viewport honoured).
   */
  player(label: string, opts?: { name?: string; viewport?: { width: number; height: number }; phone?: boolean }): Promise<Page>;
}

/**
 * `serverArgs` add server flags; `browserArgs` add Chromium flags; `https`
 * says the server serves HTTPS (its base URL is https://).
 */
export function useHarness(
  file: string,
  opts: { serverArgs?: readonly string[]; browserArgs?: readonly string[]; https?: boolean } = {},
): Harness {
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let contexts: BrowserContext[] = [];
  let pages: { label: string; page: Page; log: string[] }[] = [];

  beforeAll(async () => {
    server = await startServer(serverBinary(), opts.serverArgs);
    browser = await launchBrowser(opts.browserArgs);
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      mkdirSync('test-results', { recursive: true });
      for (const { label, page, log } of pages) {
        if (page.isClosed()) continue;
        await page.screenshot({ path: `test-results/${file}-${label}.png`, fullPage: true }).catch(() => undefined);
        const state = await stateOf(page).catch(() => null);
        process.stderr.write(`--- ${label}: state ${JSON.stringify(state)}\n${log.join('\n')}\n`);
      }
      process.stderr.write(`--- server log (last 40 lines)\n${server?.logs.slice(-40).join('\n')}\n`);
    }
    for (const c of contexts) await c.close().catch(() => undefined);
    contexts = [];
    pages = [];
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  return {
    get base() {
      if (!server) throw new Error('harness: server not started');
      return `${opts.https ? 'https' : 'http'}://${server.http}`;
    },
    get server() {
      if (!server) throw new Error('harness: server not started');
      return server;
    },
    async player(label, opts = {}) {
      if (!browser) throw new Error('harness: browser not started');
      const context = await browser.newContext({
        viewport: opts.viewport ?? { width: 1280, height: 800 },
        ...(opts.phone ? { hasTouch: true, isMobile: true } : {}),
      });
      contexts.push(context);
      if (opts.name !== undefined) {
        // Seeds a first visit only, so a name the player edits survives reloads as it would for a real visitor.
        await context.addInitScript((n: string) => {
          if (localStorage.getItem('hostrelay.name') === null) localStorage.setItem('hostrelay.name', n);
        }, opts.name);
      }
      const page = await context.newPage();
      const log: string[] = [];
      page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
      page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
      pages.push({ label, page, log });
      return page;
    },
  };
}

/** Waits for a predicate in the page (a function, not a string: the page's CSP forbids eval). */
export async function until<A extends number | string | null>(
  page: Page,
  predicate: (arg: A) => boolean,
  arg: A,
  timeoutMs = 15_000,
): Promise<void> {
  await page.waitForFunction(predicate as (a: unknown) => boolean, arg as unknown, { timeout: timeoutMs });
}

/** Hosts a room from the lobby page and returns its code. */
export async function hostRoom(
  page: Page,
  base: string,
  room: { name: string; max?: number; public?: boolean; password?: string; mode?: 'Arena' | 'Pointer demo' | 'Duel (rollback)' | 'Duel (lockstep)'; player?: string; migrate?: boolean },
): Promise<string> {
  await page.goto(`${base}/`);
  await until(page, () => window.hostrelay?.connection === 'online', null);
  if (room.player !== undefined) await page.fill('#create-name', room.player);
  await page.fill('#room-name', room.name);
  await page.fill('#max-players', String(room.max ?? 8));
  // The pointer demo unless a test asks for the arena: most flows only need packets to move.
  await page.selectOption('#room-mode', room.mode ?? 'Pointer demo');
  await page.setChecked('#room-public', room.public ?? true);
  if (room.migrate !== undefined) await page.setChecked('#room-migrate', room.migrate);
  if (room.password) await page.fill('#room-password', room.password);
  await page.click('#create-button');
  await until(page, () => window.hostrelay.phase === 'room', null);
  return page.evaluate(() => window.hostrelay.roomCode ?? '');
}

/**
 * Opens a share link with the name already remembered: the page joins by
 * itself (issue 16), and a room with a password asks for it.
 */
export async function joinByLink(page: Page, base: string, code: string, password?: string): Promise<void> {
  await page.goto(`${base}/r/${code}`);
  if (password !== undefined) {
    await until(page, () => window.hostrelay?.needsPassword === true, null);
    await page.fill('#join-password', password);
    await page.click('#join-button');
  }
  await until(page, () => window.hostrelay?.phase === 'room', null);
}

/**
 * Ada hosts an Arena room, Bob and Cal join by link and get ready, Ada
 * starts: every tab's arena is live and both clients are connected to her.
 */
export async function arenaGame(h: Harness): Promise<{ ada: Page; bob: Page; cal: Page; code: string }> {
  const ada = await h.player('ada', { name: 'Ada' });
  const code = await hostRoom(ada, h.base, { name: 'Arena', mode: 'Arena', max: 4 });
  const bob = await h.player('bob', { name: 'Bob' });
  await joinByLink(bob, h.base, code);
  const cal = await h.player('cal', { name: 'Cal' });
  await joinByLink(cal, h.base, code);
  for (const p of [bob, cal]) await p.click('#ready-button');
  await until(ada, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
  await ada.click('#start-button');
  for (const p of [ada, bob, cal]) await until(p, () => window.hostrelayGame?.ready() ?? false, null, 30_000);
  // Both clients connected to the host before anything else happens.
  await until(ada, () => (window.hostrelayGame?.hostStats().length ?? 0) === 2, null, 30_000);
  return { ada, bob, cal, code };
}

/** Collects a page's console errors and uncaught exceptions into `into`, labelled. */
export function collectErrors(page: Page, into: string[], label: string): void {
  page.on('console', (m) => {
    if (m.type() === 'error') into.push(`${label}: ${m.text()}`);
  });
  page.on('pageerror', (e) => into.push(`${label}: ${e.message}`));
}

/**
 * Ada hosts an Arena room, Grace joins it by link and gets ready, Ada starts
 * it; returns once both tabs play, on a relay/relay pair each, with every
 * console error of either tab collected in `errors`.
 */
export async function startArena(h: Harness, room: string, max = 4): Promise<{ host: Page; client: Page; code: string; errors: string[] }> {
  const errors: string[] = [];
  const host = await h.player('host', { name: 'Ada' });
  collectErrors(host, errors, 'host');
  const code = await hostRoom(host, h.base, { name: room, mode: 'Arena', max });
  const client = await h.player('client', { name: 'Grace' });
  collectErrors(client, errors, 'client');
  await joinByLink(client, h.base, code);
  await client.click('#ready-button');
  await until(host, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
  await host.click('#start-button');
  for (const page of [host, client]) await until(page, () => window.hostrelayGame?.ready() ?? false, null, 30_000);
  for (const page of [host, client]) {
    const pairs = await page.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes());
    if (JSON.stringify(pairs) !== JSON.stringify([{ local: 'relay', remote: 'relay' }])) throw new Error(`harness: selected pair ${JSON.stringify(pairs)}, not relay/relay`);
  }
  return { host, client, code, errors };
}
