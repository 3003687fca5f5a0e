import type { Page } from 'playwright-core';
import type { HostrelayState } from '../web/app/state';

/**
 * Waits until `predicate(window.hostrelay)` holds in the page. Fails at once
 * if the page reports an error (a refused TURN allocation, no relay
 * candidate, a lobby error) instead of waiting for the timeout.
 *
 * The predicate runs in the page, so it must not use anything from its
 * enclosing scope; values go in through `arg`.
 */
export async function waitForState<A = undefined>(
  page: Page,
  predicate: (s: HostrelayState, arg: A) => boolean,
  arg?: A,
  timeoutMs = 30_000,
): Promise<void> {
  const expression = `(() => {
    const s = window.hostrelay;
    if (!s) return false;
    if (s.error) throw new Error('page reported ' + s.error.code + ': ' + s.error.message);
    return (${predicate.toString()})(s, ${JSON.stringify(arg ?? null)});
  })()`;
  await page.waitForFunction(expression, undefined, { timeout: timeoutMs });
}

export function stateOf(page: Page): Promise<HostrelayState> {
  return page.evaluate(() => window.hostrelay);
}
