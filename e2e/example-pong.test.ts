import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PongState } from '../examples/pong/src/pong';
import { H, Phase } from '../examples/pong/src/rules';
import { useExampleSite } from './example-site';
import { until } from './harness';
import { serverBinary, startServer } from './server';

// The example game (examples/pong), built by `make examples` against the
// packages' dist/ and served from a static server of its own: another origin
// than the relay's, as a game developer would host it. The relay lets that
// origin in with -allowed-origins. Two desktop tabs play by keyboard; a
// 390×844 touch phone joins by the share link and plays by dragging.

const DIST = fileURLToPath(new URL('../examples/pong/dist', import.meta.url));
const SHOTS = 'test-results/example-pong';
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

const state = (page: Page): Promise<PongState> => page.evaluate(() => window.pong!);
const site = useExampleSite(DIST, { shots: SHOTS, state: (page) => page.evaluate(() => window.pong ?? null) });

beforeAll(() => {
  if (!existsSync(`${DIST}/index.html`)) throw new Error(`no ${DIST}/index.html: run \`make examples\` first`);
});

const open = (label: string, options: BrowserContextOptions): Promise<Page> => site.open(label, options);

/** Opens the example pointed at `relayHttp`, creates a game as `name`, and returns the share link. */
async function createGame(page: Page, name: string): Promise<string> {
  await page.goto(`${site.origin}/?relay=${encodeURIComponent(`http://${site.relay.http}`)}`);
  await page.fill('#name', name);
  await page.click('#go');
  await until(page, () => window.pong?.role === 'host' && window.pong.side === 'left', null, 30_000);
  return page.inputValue('#share-link');
}

/** Waits until both tabs draw the match with both paddles, the client on the right. */
async function bothPlaying(host: Page, client: Page): Promise<void> {
  await until(client, () => window.pong?.side === 'right' && window.pong.paddles.left !== null && window.pong.ball !== null, null, 30_000);
  await until(host, () => !!window.pong && window.pong.paddles.right !== null && window.pong.phase !== 0, null, 30_000);
}

/** Waits until the host and the client draw the client's paddle at the same y (it has stopped); returns it. */
async function settled(host: Page, client: Page): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [h, c] = [(await state(host)).paddles.right, (await state(client)).paddles.right];
    if (h !== null && h === c) return h;
    if (Date.now() > deadline) throw new Error(`the client's paddle is at ${c} on the client and ${h} on the host`);
    await until(client, (f) => window.pong!.frames > f, (await state(client)).frames);
  }
}

describe('the example game (examples/pong)', () => {
  it('plays in two tabs: created in one, joined by the share link in the other, by keyboard', async () => {
    const host = await open('host', DESKTOP);
    const link = await createGame(host, 'Ada');
    expect(link).toMatch(new RegExp(`^${site.origin}/\\?room=[A-Z0-9]{7}&relay=`));
    expect(await state(host)).toMatchObject({ phase: Phase.Waiting, paddles: { right: null } });
    await host.screenshot({ path: `${SHOTS}/host-waiting.png` });

    const client = await open('client', DESKTOP);
    await client.goto(link);
    expect(await client.textContent('#go')).toBe('Join game');
    await client.fill('#name', 'Grace');
    await client.click('#go');
    await bothPlaying(host, client);
    expect(await host.locator('.pong-name').allTextContents()).toEqual(['Ada (you)', 'Grace']);
    expect(await client.locator('.pong-name').allTextContents()).toEqual(['Ada', 'Grace (you)']);

    // The client's paddle, moved by its keyboard, moves on the host's screen; once it stops both agree exactly.
    const from = (await state(host)).paddles.right!;
    await client.keyboard.down('ArrowUp');
    await until(host, (y) => window.pong!.paddles.right! < y - 100, from);
    await client.keyboard.up('ArrowUp');
    expect(await settled(host, client)).toBeLessThan(from - 100);

    // The ball moves on both screens.
    for (const page of [host, client]) {
      const at = JSON.stringify((await state(page)).ball);
      await until(
        page,
        (a) => {
          const [b, b0] = [window.pong!.ball, JSON.parse(a) as { x: number; y: number }];
          return !!b && Math.hypot(b.x - b0.x, b.y - b0.y) > 50;
        },
        at,
        30_000,
      );
    }

    // Both paddles at the top: the serve goes past one of them and the score changes on both screens.
    await host.keyboard.down('KeyW');
    await client.keyboard.down('ArrowUp');
    await until(host, () => window.pong!.score[0] + window.pong!.score[1] > 0, null, 30_000);
    await until(client, () => window.pong!.score[0] + window.pong!.score[1] > 0, null, 30_000);
    await host.keyboard.up('KeyW');
    await client.keyboard.up('ArrowUp');
    const score = (await state(host)).score.join(' : ');
    await until(host, (s) => document.querySelector('.pong-points')?.textContent === s, score);

    await host.screenshot({ path: `${SHOTS}/host-desktop.png` });
    await client.screenshot({ path: `${SHOTS}/client-desktop.png` });
  });

  it('plays on a 390×844 touch phone that opens the share link: a drag moves its paddle on the host', async () => {
    const host = await open('host', DESKTOP);
    const link = await createGame(host, 'Ada');
    const phone = await open('phone', PHONE);
    await phone.goto(link);
    await phone.fill('#name', 'Grace');
    await phone.tap('#go');
    await bothPlaying(host, phone);

    // It fits: nothing scrolls sideways, and the field, turned upright, takes the phone's width.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = (await phone.locator('.pong-stage canvas').boundingBox())!;
    expect(box.height).toBeGreaterThan(box.width);
    expect(box.width).toBeGreaterThan(300);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    expect(await phone.textContent('.pong-status')).toBe('You are the yellow paddle: drag anywhere on the field.');

    // A finger drags along the bottom of the field, where the phone's own paddle is, from the middle to
    // near the left edge; the field is turned a quarter, so across the screen is along the paddle's wall.
    const cdp = await phone.context().newCDPSession(phone);
    const y = box.y + box.height * 0.9;
    const x0 = box.x + box.width / 2;
    const x1 = box.x + box.width * 0.1;
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: x0, y }] });
    for (let i = 1; i <= 8; i++) {
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: x0 + ((x1 - x0) * i) / 8, y }] });
    }
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });

    // The paddle goes where the finger was let go (screen left on the turned field is the far end
    // of the wall: y = H × 0.9), and the host sees it there.
    const aim = H * (1 - (x1 - box.x) / box.width);
    await until(host, (a) => Math.abs(window.pong!.paddles.right! - a) <= 1, aim, 15_000);
    expect(Math.abs((await settled(host, phone)) - aim)).toBeLessThanOrEqual(1);

    await phone.screenshot({ path: `${SHOTS}/phone-390x844.png` });
    await host.screenshot({ path: `${SHOTS}/host-with-phone.png` });
  });

  it('says so when the relay does not let the page’s origin in (no -allowed-origins)', async () => {
    const closed = await startServer(serverBinary());
    try {
      const page = await open('refused', DESKTOP);
      await page.goto(`${site.origin}/?relay=${encodeURIComponent(`http://${closed.http}`)}`);
      await page.fill('#name', 'Ada');
      await page.click('#go');
      await until(page, () => (document.getElementById('error')?.textContent ?? '') !== '', null, 30_000);
      // The relay closes with 1008 and a reason rather than refusing the
      // upgrade (which a page sees only as close 1006, with no reason).
      expect(await page.textContent('#error')).toBe('connection closed: origin not allowed: add it with -allowed-origins');
      expect(await page.isEnabled('#go')).toBe(true); // they can try again
    } finally {
      await closed.stop();
    }
  });
});
