import { fileURLToPath } from 'node:url';
import type { BrowserContextOptions, CDPSession, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { spawnPoint } from '../examples/phaser/src/rules';
import type { TagState } from '../examples/phaser/src/tag';
import { useExampleSite } from './example-site';
import { until } from './harness';

// The Phaser example (examples/phaser), built by `make examples` against the
// packages' dist/ and served from its own origin, as examples/pong is. Three
// players join by the share link: two desktop tabs steer by keyboard, a
// 390×844 touch phone by the virtual joystick (touches sent through the
// DevTools protocol, as a touch screen's enter Chromium). Each tab sees the
// others run, tags happen, and what the host's Phaser arcade physics decides
// (who is it, where a bump left a player) is what every tab ends up showing.

const DIST = fileURLToPath(new URL('../examples/phaser/dist', import.meta.url));
const SHOTS = process.env['HOSTRELAY_SCREENSHOTS'] ?? 'test-results/example-phaser';
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

const site = useExampleSite(DIST, { shots: SHOTS, state: (page) => page.evaluate(() => window.tag ?? null) });
const open = site.open;

const state = (page: Page): Promise<TagState> => page.evaluate(() => window.tag!);

type Player = TagState['players'][number];
async function player(page: Page, slot: number): Promise<Player> {
  const p = (await state(page)).players.find((q) => q.slot === slot);
  if (!p) throw new Error(`no player in slot ${slot} on this page`);
  return p;
}

/** Waits until the page draws `n` players, itself among them. */
async function seesPlayers(page: Page, n: number): Promise<void> {
  await until(page, (k) => !!window.tag && window.tag.slot !== null && window.tag.players.length === k, n, 30_000);
}

/** Waits until `slot`, as this page draws it, is at least `d` units from (x, y). */
async function movedFrom(page: Page, slot: number, from: { x: number; y: number }, d = 100): Promise<void> {
  await until(
    page,
    (a) => {
      const [s, x, y, dist] = JSON.parse(a) as number[];
      const p = window.tag?.players.find((q) => q.slot === s);
      return !!p && Math.hypot(p.x - x!, p.y - y!) >= dist!;
    },
    JSON.stringify([slot, from.x, from.y, d]),
    30_000,
  );
}

/** Waits until this page draws `slot` as it. */
async function isIt(page: Page, slot: number): Promise<void> {
  await until(page, (s) => !!window.tag?.players.find((q) => q.slot === s)?.it, slot, 30_000);
}

/** A steering hand: points the player along (dx, dy) (0, 0: lets go). */
type Steer = (dx: number, dy: number) => Promise<void>;

/** Arrow keys held for a direction, eight ways: what a player at a keyboard does. */
function keyboard(page: Page): Steer {
  const held = new Set<string>();
  return async (dx, dy) => {
    const want = new Set<string>();
    if (dx < -6) want.add('ArrowLeft');
    if (dx > 6) want.add('ArrowRight');
    if (dy < -6) want.add('ArrowUp');
    if (dy > 6) want.add('ArrowDown');
    for (const k of [...held]) if (!want.has(k)) (held.delete(k), await page.keyboard.up(k));
    for (const k of want) if (!held.has(k)) (held.add(k), await page.keyboard.down(k));
  };
}

/**
 * A thumb on the phone's virtual joystick: it lands at `base` (screen
 * pixels) and slides 50 px along the direction; (0, 0) lifts it.
 */
function joystick(cdp: CDPSession, base: { x: number; y: number }): Steer {
  let down = false;
  const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', x: number, y: number): Promise<unknown> =>
    cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ id: 1, x, y, radiusX: 8, radiusY: 8, force: 1 }] });
  return async (dx, dy) => {
    const d = Math.hypot(dx, dy);
    if (d === 0) {
      if (down) await touch('touchEnd', base.x, base.y);
      down = false;
      return;
    }
    if (!down) await touch('touchStart', base.x, base.y);
    down = true;
    await touch('touchMove', base.x + (dx / d) * 50, base.y + (dy / d) * 50);
  };
}

/**
 * Steers `slot` on its own page into `target` until `done` holds (read on
 * the host), re-aiming at where the page draws the target every few frames.
 */
async function chase(page: Page, slot: number, target: number, steer: Steer, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`slot ${slot} never caught slot ${target}`);
    const [me, them] = [await player(page, slot), await player(page, target)];
    await steer(them.x - me.x, them.y - me.y);
    await until(page, (f) => window.tag!.frames > f + 3, (await state(page)).frames);
  }
  await steer(0, 0);
}

/** Waits until every page draws every player exactly where the host has it (nobody moving). */
async function agree(host: Page, others: Page[]): Promise<Player[]> {
  const deadline = Date.now() + 20_000;
  const key = (s: TagState): string => JSON.stringify(s.players.map(({ slot, x, y, it, tags }) => ({ slot, x, y, it, tags })).sort((a, b) => a.slot - b.slot));
  for (;;) {
    const h = await state(host);
    const views = await Promise.all(others.map(state));
    if (views.every((v) => key(v) === key(h))) return [...h.players].sort((a, b) => a.slot - b.slot);
    if (Date.now() > deadline) throw new Error(`the pages never agreed with the host:\n${key(h)}\n${views.map(key).join('\n')}`);
    await until(host, (f) => window.tag!.frames > f + 5, h.frames);
  }
}

describe('the Phaser example (examples/phaser)', () => {
  it('three players by the share link, two at a keyboard and one on a touch phone: all see each other run, tags pass on, the host decides, also when "it" leaves', async () => {
    // The host creates the game; its tab runs the arcade world, one body per player.
    const host = await open('host', DESKTOP);
    await host.goto(site.start);
    await host.fill('#name', 'Ada');
    await host.click('#go');
    await until(host, () => window.tag?.role === 'host' && window.tag.players.length === 1, null, 30_000);
    const link = await host.inputValue('#share-link');
    expect(link).toMatch(new RegExp(`^${site.origin}/\\?room=[A-Z0-9]{7}&relay=`));

    const desk = await open('desktop', DESKTOP);
    await desk.goto(link);
    expect(await desk.textContent('#go')).toBe('Join game');
    await desk.fill('#name', 'Grace');
    await desk.click('#go');
    await seesPlayers(desk, 2);

    const phone = await open('phone', PHONE);
    await phone.goto(link);
    await phone.fill('#name', 'Linus');
    await phone.tap('#go');
    for (const page of [host, desk, phone]) await seesPlayers(page, 3);
    expect((await state(desk)).slot).toBe(1);
    expect((await state(phone)).slot).toBe(2);
    const h0 = await state(host);
    expect(h0.bodies).toBe(3);
    expect(h0.players.filter((p) => p.it).map((p) => p.slot)).toEqual([0]); // the host's player starts as it
    expect(await phone.locator('.tag-board li').allTextContents()).toEqual(['Ada0', 'Grace0', 'Linus (you)0']);

    // The phone's page fits it: no sideways scroll, the canvas as wide as the screen and above its bottom.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = (await phone.locator('.tag-stage canvas').boundingBox())!;
    expect(box.width).toBeGreaterThan(340);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    expect(await phone.textContent('.tag-status')).toContain('put a thumb anywhere and drag');

    // Everyone runs at once, apart: Ada left, Grace right (keys), Linus down (the thumb, low on the canvas).
    const cdp = await phone.context().newCDPSession(phone);
    const thumb = joystick(cdp, { x: box.x + box.width / 2, y: box.y + box.height - 90 });
    const [ada, grace] = [keyboard(host), keyboard(desk)];
    await ada(-100, 0);
    await grace(100, 0);
    await thumb(0, 100);
    for (const page of [host, desk, phone]) {
      await movedFrom(page, 0, spawnPoint(0));
      await movedFrom(page, 1, spawnPoint(1));
      await movedFrom(page, 2, spawnPoint(2));
    }
    await host.screenshot({ path: `${SHOTS}/host-desktop-running.png` });
    await phone.screenshot({ path: `${SHOTS}/phone-390x844-running.png` });
    await ada(0, 0);
    await grace(0, 0);
    await thumb(0, 0);
    // Running free, a client's prediction is Phaser's arithmetic exactly: the host never overruled one.
    expect((await state(desk)).mispredictions).toBe(0);
    expect((await state(phone)).mispredictions).toBe(0);

    // Grace runs into Ada, who is it: Ada's touch tags her (the host's collider decides), and Ada scores.
    await chase(desk, 1, 0, grace, async () => (await player(host, 1)).it);
    // Ada is free now, and runs down the wall, away from Grace (who came from the right, and who may
    // not tag her back anyway: no tag-backs) and from Linus's way to her.
    const a1 = await player(host, 0);
    await ada(0, 100);
    await movedFrom(host, 0, a1, 250);
    await ada(0, 0);
    // Linus's thumb steers him into Grace; once her freeze is over, her touch tags him.
    await chase(phone, 2, 1, thumb, async () => (await player(host, 2)).it);
    for (const page of [host, desk, phone]) await isIt(page, 2);
    await desk.screenshot({ path: `${SHOTS}/desktop-after-tags.png` });
    await phone.screenshot({ path: `${SHOTS}/phone-390x844-it.png` });

    // Once everyone stands still, every page shows the host's world exactly: the tags it decided,
    // and where its physics left each player, a client's own predicted player too.
    const final = await agree(host, [desk, phone]);
    expect(final.map((p) => [p.slot, p.it, p.tags])).toEqual([
      [0, false, 1],
      [1, false, 1],
      [2, true, 0],
    ]);
    // Walking into someone is what a client cannot predict: the host's physics pushed Linus back.
    expect((await state(phone)).mispredictions).toBeGreaterThan(0);
    await until(phone, () => document.querySelector('.tag-board li.it')?.textContent === 'Linus (you)0', null);
    expect(await phone.textContent('.tag-status')).toContain('You are it');
    expect(await host.textContent('.tag-status')).toContain('Run from Linus');

    // Linus closes his tab while he is it: the host drops his body, and "it" goes to the lowest slot, Ada.
    await phone.close();
    await until(host, () => window.tag!.bodies === 2 && window.tag!.players.length === 2, null, 30_000);
    for (const page of [host, desk]) await isIt(page, 0);
  });

});
