import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// Every lobby screen at a 390×844 phone and a 1280×800 desktop: the room
// browser, the create form showing its errors, the room view with players
// and chat, and a refusal. Each must fit its width (nothing scrolls
// sideways) and keep its main action on screen. With HOSTRELAY_SCREENSHOTS=dir
// (`make screenshots`) each screen is saved there as a PNG to look at.

const h = useHarness('screens');
const dir = process.env['HOSTRELAY_SCREENSHOTS'];

const VIEWPORTS = [
  { label: 'phone', width: 390, height: 844 },
  { label: 'desktop', width: 1280, height: 800 },
] as const;

/** Checks the page fits its width and that `action` is visible; saves a PNG when asked. */
async function screen(page: Page, name: string, action: string): Promise<void> {
  const { width } = page.viewportSize() ?? { width: 0 };
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} scrolls sideways`).toBeLessThanOrEqual(width);
  // An image shown before it has a picture is a broken-image icon and its alt text.
  const broken = await page.evaluate(() =>
    [...document.images]
      .filter((img) => img.checkVisibility({ visibilityProperty: true }) && !(img.complete && img.naturalWidth > 0))
      .map((img) => img.id || img.alt),
  );
  expect(broken, `${name} shows an image that has no picture`).toEqual([]);
  const box = await page.locator(action).boundingBox();
  expect(box, `${name}: ${action} is not laid out`).not.toBeNull();
  expect(box!.x >= 0 && box!.x + box!.width <= width, `${name}: ${action} is cut off`).toBe(true);
  if (dir) {
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
  }
}

describe('lobby screens', () => {
  for (const vp of VIEWPORTS) {
    it(`fit a ${vp.width}×${vp.height} ${vp.label}`, async () => {
      const viewport = { width: vp.width, height: vp.height };

      // Two public rooms to browse, one behind a password.
      const ada = await h.player(`${vp.label}-ada`, { name: 'Ada' });
      const code = await hostRoom(ada, h.base, { name: 'Friday night arena', max: 4, mode: 'Arena' });
      const lou = await h.player(`${vp.label}-lou`, { name: 'Lou' });
      await hostRoom(lou, h.base, { name: 'Members only', password: 'pw', max: 6 });

      const pat = await h.player(`${vp.label}-pat`, { name: 'Pat', viewport });
      await pat.goto(`${h.base}/`);
      await until(pat, (c) => window.hostrelay?.rooms.some((r) => r.code === c) ?? false, code);
      await until(pat, () => document.querySelectorAll('#room-list li').length === 2, null);
      await screen(pat, `${vp.label}-browser`, '#create-button');

      // The create form with its errors showing.
      await pat.fill('#create-name', '');
      await pat.fill('#max-players', '40');
      await pat.click('#create-button');
      await until(pat, () => !document.getElementById('name-error')?.hidden, null);
      await pat.fill('#create-name', 'Pat');
      await pat.click('#create-button');
      await until(pat, () => !document.getElementById('max-players-error')?.hidden, null);
      await screen(pat, `${vp.label}-create-errors`, '#create-button');

      // The room view: Pat joins Ada's room by its link, gets ready, and they chat.
      await joinByLink(pat, h.base, code);
      await pat.click('#ready-button');
      await until(ada, () => window.hostrelay.players.some((p) => p.name === 'Pat' && p.ready), null);
      for (const [page, line] of [
        [ada, 'gl hf'],
        [pat, 'ready when you are <b>boss</b>'],
      ] as const) {
        await page.fill('#chat-input', line);
        await page.press('#chat-input', 'Enter');
      }
      await until(pat, () => document.querySelectorAll('#chat-log li').length >= 2, null);
      await until(pat, () => window.hostrelay.openPeers.length === 1, null);
      await screen(pat, `${vp.label}-room-client`, '#ready-button');
      await ada.setViewportSize(viewport);
      await screen(ada, `${vp.label}-room-host`, '#start-button');

      // A refusal: a wrong password, then a room that is gone.
      const sam = await h.player(`${vp.label}-sam`, { name: 'Sam', viewport });
      const locked = await lou.evaluate(() => window.hostrelay.roomCode ?? '');
      await sam.goto(`${h.base}/r/${locked}`); // the remembered name joins by itself
      await until(sam, () => window.hostrelay?.needsPassword === true, null);
      await sam.fill('#join-password', 'nope');
      await sam.click('#join-button');
      await until(sam, () => document.getElementById('join-error')?.textContent?.includes('not right') ?? false, null);
      await screen(sam, `${vp.label}-wrong-password`, '#join-button');

      await lou.click('#leave-button');
      await sam.goto(`${h.base}/r/${locked}`);
      await until(sam, () => window.hostrelay?.phase === 'error', null);
      await screen(sam, `${vp.label}-room-gone`, '#home-link');
      expect(await sam.textContent('#error-title')).toBe('Room not found');
    });
  }
});
