import type { Page } from 'playwright-core';
import type { HostrelayState } from '../web/app/state';

/**
 * Waits until `predicate(arg)` holds in the page, and fails at once if the
 * page reports an error in window.hostrelay.error (a refused TURN
 * allocation, no relay candidate, a lobby error) instead of waiting for the
 * timeout.
 *
 * The predicate runs in the page (it reads window.hostrelay itself), so it
 * must use nothing from its enclosing scope; values go in through `arg`.
 * Playwright sends it as a function, not a string: the lobby page's CSP
 * forbids eval.
 */
export async function waitForState<A extends number | string | null>(
  page: Page,
  predicate: (arg: A) => boolean,
  arg: A,
  timeoutMs = 30_000,
): Promise<void> {
  const watch = ++watches;
  const done = page
    .waitForFunction(predicate as (a: unknown) => boolean, arg as unknown, { timeout: timeoutMs })
    .then(() => undefined);
  // An error needs no frame-exact notice: every 100 ms, not every frame,
  // and it stops once the wait is over (see below).
  const failed = page
    .waitForFunction(
      (w: number) => {
        const over = (window as WatchedWindow).__waitsOver;
        if (over?.has(w)) return { over: true as const };
        const error = window.hostrelay?.error;
        return error ? { error } : false;
      },
      watch,
      { timeout: timeoutMs, polling: 100 },
    )
    .then(async (handle) => {
      const v = (await handle.jsonValue()) as { over: true } | { error: NonNullable<HostrelayState['error']> };
      if ('error' in v) throw new Error(`page reported ${v.error.code}: ${v.error.message}`);
    });
  done.catch(() => undefined);
  failed.catch(() => undefined);
  try {
    await Promise.race([done, failed]);
  } finally {
    // The error watch would otherwise poll on until its timeout: a test's
    // many waits left dozens of them running in each page, CPU the
    // pages under test were short of on a two-core machine.
    await page
      .evaluate((w) => {
        const win = window as WatchedWindow;
        (win.__waitsOver ??= new Set()).add(w);
      }, watch)
      .catch(() => undefined);
  }
}

/** Numbers each waitForState, so that its error watch can be told the wait is over. */
let watches = 0;

type WatchedWindow = Window & { __waitsOver?: Set<number> };

export function stateOf(page: Page): Promise<HostrelayState> {
  return page.evaluate(() => window.hostrelay);
}

/** When things happened in the page (performance.now() milliseconds), from the page's User Timing marks (web/app/marks.ts). */
export interface PageMarks {
  /** The page's script started. */
  pageStart: number | null;
  /** The lobby first welcomed the page. */
  welcome: number | null;
  /** The player last asked to create or join. */
  joinStart: number | null;
  /** The page first entered a room (the reply to create or join). */
  joined: number | null;
  /** The first data channel to a peer opened. */
  channelOpen: number | null;
  /** The room last got a new host. */
  hostChanged: number | null;
}

export function marksOf(page: Page): Promise<PageMarks> {
  return page.evaluate(() => {
    const last = (name: string): number | null => performance.getEntriesByName(`hostrelay:${name}`, 'mark').at(-1)?.startTime ?? null;
    return {
      pageStart: last('page-start'),
      welcome: last('lobby-welcome'),
      joinStart: last('join-start'),
      joined: last('room-joined'),
      channelOpen: last('channel-open'),
      hostChanged: last('host-changed'),
    };
  });
}
