import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CatchState } from '../examples/react-lobby/src/DotGame';
import { H, W } from '../examples/react-lobby/src/rules';
import { useExampleSite } from './example-site';
import { until } from './harness';

// The React example (examples/react-lobby), built by `make examples`
// against the packages' dist/ and served from an origin of its own, as
// examples/pong is. Two desktop tabs: one creates a party, the other opens
// its share link; they ready up, chat and play (each catches the dot once).
// A 390×844 touch phone finds the party in the list of open parties and
// plays by tapping.

const DIST = fileURLToPath(new URL('../examples/react-lobby/dist', import.meta.url));
const SHOTS = process.env['HOSTRELAY_SCREENSHOTS'] ?? 'test-results/example-react-lobby';
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

const caught = (page: Page): Promise<CatchState | null> => page.evaluate(() => window.catchDot ?? null);
const site = useExampleSite(DIST, { shots: SHOTS, state: (page) => caught(page) });

beforeAll(() => {
  if (!existsSync(`${DIST}/index.html`)) throw new Error(`no ${DIST}/index.html: run \`make examples\` first`);
});

async function open(label: string, options: BrowserContextOptions, url: string): Promise<Page> {
  const page = await site.open(label, options);
  await page.goto(url);
  return page;
}

const home = (): string => `${site.origin}/?relay=${encodeURIComponent(`http://${site.relay.http}`)}`;

/** The players as the page lists them: "name badge". */
const listed = (page: Page): Promise<string[]> =>
  page.locator('.players li').evaluateAll((lis) => lis.map((li) => `${li.querySelector('.name')?.textContent} ${li.querySelector('.badge')?.textContent}`));

/** Enters `name` and goes on (Continue, or Join the party from a link). */
async function enter(page: Page, name: string, tap = false): Promise<void> {
  await page.fill('#name', name);
  if (tap) await page.tap('button[type=submit]');
  else await page.click('button[type=submit]');
}

/** Creates a party as `name` on a new desktop page; returns the page and its share link. */
async function createParty(name: string): Promise<{ page: Page; link: string }> {
  const page = await open(name, DESKTOP, home());
  await enter(page, name);
  await page.click('text=Create a party');
  await page.waitForSelector('#share-link');
  return { page, link: await page.inputValue('#share-link') };
}

/** Clicks (or taps) the dot where `page` draws it, and waits until the host counts `name`'s catch. */
async function catchDot(page: Page, host: Page, name: string, tap = false): Promise<void> {
  const before = (await caught(host))!.scores[name] ?? 0;
  const dot = (await caught(page))!.dot!;
  const box = (await page.locator('.field canvas').boundingBox())!;
  const [x, y] = [box.x + (dot.x / W) * box.width, box.y + (dot.y / H) * box.height];
  if (tap) await page.tap('.field canvas', { position: { x: x - box.x, y: y - box.y } });
  else await page.mouse.click(x, y);
  await until(
    host,
    (arg) => {
      const [n, b] = JSON.parse(arg) as [string, number];
      return (window.catchDot?.scores[n] ?? 0) > b;
    },
    JSON.stringify([name, before]),
    15_000,
  );
}

describe('the React example (examples/react-lobby)', () => {
  it('two tabs join by link, ready up, chat and play', async () => {
    const { page: ada, link } = await createParty('Ada');
    expect(link).toMatch(new RegExp(`^${site.origin}/\\?room=[A-Z0-9]{7}&relay=`));
    expect(await listed(ada)).toEqual(['Ada (you) host']);
    expect(await ada.textContent('.ready-up button')).toBe('Waiting for everyone to be ready…');

    const grace = await open('Grace', DESKTOP, link);
    expect(await grace.textContent('button[type=submit]')).toBe('Join the party');
    await enter(grace, 'Grace');
    await until(grace, () => document.querySelector<HTMLButtonElement>('.ready-up button')?.disabled === false, null, 30_000);
    await until(ada, () => document.querySelectorAll('.players li').length === 2, null);
    expect(await listed(ada)).toEqual(['Ada (you) host', 'Grace not ready']);
    expect(await ada.isDisabled('.ready-up button')).toBe(true);

    await grace.click('text=I’m ready');
    await until(ada, () => document.querySelector('.ready-up button')?.textContent === 'Start', null);
    expect(await listed(grace)).toEqual(['Ada host', 'Grace (you) ready']);

    await grace.fill('[aria-label=Message]', 'ready when you are');
    await grace.click('.chat button[type=submit]');
    await ada.fill('[aria-label=Message]', 'here we go');
    await ada.press('[aria-label=Message]', 'Enter');
    for (const page of [ada, grace]) {
      await until(page, () => document.querySelectorAll('.chat li').length === 2, null);
      expect(await page.locator('.chat li').allTextContents()).toEqual(['Grace ready when you are', 'Ada here we go']);
    }
    await ada.screenshot({ path: `${SHOTS}/desktop-lobby.png` });

    await ada.click('text=Start');
    await until(grace, () => window.catchDot?.role === 'client' && window.catchDot.dot !== null && window.catchDot.slot !== null, null, 30_000);
    await until(ada, () => window.catchDot?.role === 'host' && Object.keys(window.catchDot.scores).length === 2, null, 30_000);

    await catchDot(grace, ada, 'Grace');
    await catchDot(ada, ada, 'Ada');
    await until(grace, () => window.catchDot?.scores['Grace'] === 1 && window.catchDot.scores['Ada'] === 1, null);
    await until(grace, () => document.querySelector('.scores')?.textContent?.includes('Grace 1') ?? false, null);
    await grace.screenshot({ path: `${SHOTS}/desktop-playing.png` });
  });

  it('a phone finds the party in the list, joins, and plays by tapping', async () => {
    const { page: ada } = await createParty('Ada');
    const phone = await open('phone', PHONE, home());
    await enter(phone, 'Grace', true);
    await phone.waitForSelector('.parties li');
    expect(await phone.locator('.parties li span').first().textContent()).toBe("Ada's party");
    await phone.screenshot({ path: `${SHOTS}/phone-parties.png` });
    await phone.tap('.parties li button');
    await until(phone, () => document.querySelector<HTMLButtonElement>('.ready-up button')?.disabled === false, null, 30_000);
    await phone.tap('text=I’m ready');
    await until(ada, () => document.querySelector('.ready-up button')?.textContent === 'Start', null);
    await ada.click('text=Start');
    await until(phone, () => window.catchDot?.dot != null && window.catchDot.slot !== null, null, 30_000);

    // It fits: nothing scrolls sideways, and the field takes the phone's width.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = (await phone.locator('.field canvas').boundingBox())!;
    expect(box.width).toBeGreaterThan(340);
    await catchDot(phone, ada, 'Grace', true);
    await phone.screenshot({ path: `${SHOTS}/phone-playing.png` });
  });
});
