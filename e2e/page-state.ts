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
  const done = page
    .waitForFunction(predicate as (a: unknown) => boolean, arg as unknown, { timeout: timeoutMs })
    .then(() => undefined);
  const failed = page
    .waitForFunction(() => window.hostrelay?.error ?? false, undefined, { timeout: timeoutMs })
    .then(async (handle) => {
      const err = (await handle.jsonValue()) as HostrelayState['error'];
      throw new Error(`page reported ${err?.code}: ${err?.message}`);
    });
  // The loser keeps polling until the page closes or it times out; nobody listens.
  done.catch(() => undefined);
  failed.catch(() => undefined);
  await Promise.race([done, failed]);
}

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
