import { mkdirSync } from 'node:fs';
import type { CDPSession, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// A player who opens the share link on a phone must be able to play: a
// 390×844 touch context (hasTouch, isMobile) joins a desktop host's room
// and plays with real touch input, sent through the DevTools protocol's
// Input.dispatchTouchEvent the way a touch screen's events enter Chromium
// (so touch-action, pointer capture and multi-touch are the browser's own).
// The host must see what the phone's fingers did. Screenshots of the phone
// go to test-results/touch-*.png.

const h = useHarness('touch');

const PHONE = { width: 390, height: 844 };
/** Where the phone's screenshots go (make screenshots sets its own folder). */
const SHOTS = process.env['HOSTRELAY_SCREENSHOTS'] ?? 'test-results';

interface Finger {
  id: number;
  x: number;
  y: number;
}

/** A touch screen on a page: every call says which fingers are down now and where. */
class TouchScreen {
  private constructor(private readonly cdp: CDPSession) {}

  static async of(page: Page): Promise<TouchScreen> {
    return new TouchScreen(await page.context().newCDPSession(page));
  }

  /** Fingers land or are added; the list is every finger down afterwards. */
  start(...down: Finger[]): Promise<void> {
    return this.send('touchStart', down);
  }

  /** The fingers down move to these spots. */
  move(...down: Finger[]): Promise<void> {
    return this.send('touchMove', down);
  }

  /** These fingers lift, the others stay down (Chromium releases the points a touchEnd lists). */
  lift(...up: Finger[]): Promise<void> {
    return this.send('touchEnd', up);
  }

  /** Every finger lifts. */
  end(): Promise<void> {
    return this.send('touchEnd', []);
  }

  /** One finger slides from `from` to `to` in `steps` moves, staying down at the end. */
  async drag(id: number, from: { x: number; y: number }, to: { x: number; y: number }, steps = 6, others: Finger[] = []): Promise<void> {
    for (let i = 1; i <= steps; i++) {
      const f = i / steps;
      await this.move(...others, { id, x: from.x + (to.x - from.x) * f, y: from.y + (to.y - from.y) * f });
    }
  }

  private async send(type: 'touchStart' | 'touchMove' | 'touchEnd', fingers: Finger[]): Promise<void> {
    await this.cdp.send('Input.dispatchTouchEvent', {
      type,
      touchPoints: fingers.map((f) => ({ id: f.id, x: f.x, y: f.y, radiusX: 8, radiusY: 8, force: 1 })),
    });
  }
}

async function centre(page: Page, selector: string): Promise<{ x: number; y: number }> {
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`touch test: ${selector} is not on screen`);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

async function noSidewaysScroll(page: Page, what: string): Promise<void> {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  expect(client, `${what}: layout width`).toBe(PHONE.width);
  expect(scroll, `${what} scrolls sideways`).toBeLessThanOrEqual(client);
}

/** A desktop host and a phone in a started game of `mode`. */
async function startOnPhone(mode: 'Arena' | 'Pointer demo'): Promise<{ host: Page; phone: Page }> {
  const host = await h.player('host', { name: 'Ada' });
  const code = await hostRoom(host, h.base, { name: `${mode} on a phone`, mode, max: 4 });
  const phone = await h.player('phone', { name: 'Grace', viewport: PHONE, phone: true });
  await joinByLink(phone, h.base, code);
  await phone.tap('#ready-button');
  await until(host, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
  await host.click('#start-button');
  await until(phone, () => window.hostrelay.started, null, 30_000);
  return { host, phone };
}

type Body = { x: number; y: number; vx: number; vy: number };

/** The host's view of entity `id` (the arena's players are entities by slot; the ball is 1000). */
function bodyOnHost(host: Page, id: number): Promise<Body> {
  return host.evaluate((id) => {
    const e = window.hostrelayGame!.entities().find(([i]) => i === id)?.[1];
    if (!e) throw new Error(`no entity ${id} on the host`);
    return { x: e.x, y: e.y, vx: e.vx, vy: e.vy };
  }, id);
}

const BALL = 1000;

/** Waits until the host has entity `id` at rest, and returns where. */
async function atRest(host: Page, id: number): Promise<Body> {
  await until(
    host,
    (id) => {
      const e = window.hostrelayGame!.entities().find(([i]) => i === id)?.[1];
      return !!e && e.vx === 0 && e.vy === 0;
    },
    id,
    20_000,
  );
  return bodyOnHost(host, id);
}

/** Puts the ball at rest at (x, y) on the host and waits until the phone draws it there too. */
async function placeBall(host: Page, phone: Page, x: number, y: number): Promise<void> {
  expect(await host.evaluate(([x, y]) => window.hostrelayGame!.placeBall(x!, y!, 0, 0), [x, y])).toBe(true);
  await until(
    phone,
    (arg) => {
      const [x, y, ball] = JSON.parse(arg) as [number, number, number];
      const b = window.hostrelayGame!.entities().find(([i]) => i === ball)?.[1];
      return !!b && Math.hypot(b.x - x, b.y - y) < 0.5 && b.vx === 0 && b.vy === 0;
    },
    JSON.stringify([x, y, BALL]),
  );
}

describe('touch controls on a 390×844 phone', () => {
  it('plays the arena: the stick moves the player the way it is dragged, and Kick kicks, alone or with the stick held', async () => {
    const { host, phone } = await startOnPhone('Arena');
    for (const page of [host, phone]) await until(page, () => window.hostrelayGame?.ready() ?? false, null, 30_000);

    // The phone shows the stick and Kick and speaks of them; the desktop shows keys.
    await expect(phone.locator('.hr-touch').isVisible()).resolves.toBe(true);
    expect(await phone.locator('.hr-game-help').textContent()).toBe('Drag to move, tap Kick.');
    await expect(host.locator('.hr-touch').isVisible()).resolves.toBe(false);
    expect(await host.locator('.hr-game-help').textContent()).toContain('arrows or WASD');
    await noSidewaysScroll(phone, 'the arena');

    // The field and the controls fit on the phone's screen together.
    await phone.locator('.hr-touch').scrollIntoViewIfNeeded();
    const field = (await phone.locator('.hr-game-stage').boundingBox())!;
    const pad = (await phone.locator('.hr-touch').boundingBox())!;
    expect(field.x).toBeGreaterThanOrEqual(0);
    expect(field.x + field.width).toBeLessThanOrEqual(PHONE.width);
    expect(pad.x + pad.width).toBeLessThanOrEqual(PHONE.width);
    expect(pad.y).toBeGreaterThanOrEqual(field.y + field.height); // under the field, hiding none of it
    expect(pad.y + pad.height - field.y).toBeLessThanOrEqual(PHONE.height);

    const me = await phone.evaluate(() => window.hostrelayGame!.localId());
    expect(me).not.toBeNull();
    const slot = me!;
    const fingers = await TouchScreen.of(phone);
    const stick = await centre(phone, '.hr-touch-stick');
    const kick = await centre(phone, '.hr-touch-kick');
    const scrollY = await phone.evaluate(() => window.scrollY);

    // Drag right from where the thumb lands: the host sees the phone's player go right, and only right.
    const p0 = await atRest(host, slot);
    await fingers.start({ id: 0, ...stick });
    await fingers.drag(0, stick, { x: stick.x + 40, y: stick.y });
    await until(host, (arg) => {
      const [id, x] = JSON.parse(arg) as [number, number];
      return (window.hostrelayGame!.entities().find(([i]) => i === id)?.[1].x ?? 0) > x + 60;
    }, JSON.stringify([slot, p0.x]));
    mkdirSync(SHOTS, { recursive: true });
    await phone.screenshot({ path: `${SHOTS}/touch-arena-phone.png` }); // thumb on the stick, knob pushed right
    await fingers.end();
    const p1 = await atRest(host, slot);
    expect(p1.x - p0.x).toBeGreaterThan(60);
    expect(Math.abs(p1.y - p0.y)).toBeLessThan(1);

    // Down and to the left, from a new landing spot higher in the stick's area.
    const high = { x: stick.x - 30, y: stick.y - 30 };
    await fingers.start({ id: 1, ...high });
    await fingers.drag(1, high, { x: high.x - 30, y: high.y + 30 });
    await until(host, (arg) => {
      const [id, x, y] = JSON.parse(arg) as [number, number, number];
      const e = window.hostrelayGame!.entities().find(([i]) => i === id)?.[1];
      return !!e && e.x < x - 40 && e.y > y + 40;
    }, JSON.stringify([slot, p1.x, p1.y]));
    await fingers.end();
    const p2 = await atRest(host, slot);
    // Diagonal: as far down as left (movePlayer normalises it).
    expect(Math.abs(p1.x - p2.x - (p2.y - p1.y))).toBeLessThan(2);

    // Kicks go straight up from a player at the ball's x, so the ball never reaches a goal: a goal
    // would put every player back on its spot in the middle of the test. A kick is told from a push
    // by its speed in the host's ball history: a kick sends the ball off at 520 px/s or more, a
    // player running into it pushes it at most 1.5 × 260 = 390 px/s (6.5 px a tick).
    const kickedUp = async (since: number): Promise<void> =>
      until(host, (since) => {
        const hist = window.hostrelayGame!.ballHistory().filter(([t]) => t >= since);
        return hist.some(([, , y], i) => i > 0 && y - hist[i - 1]![2] < -450 / 60);
      }, since);

    // A tap on Kick kicks a ball in reach, however short the tap.
    await placeBall(host, phone, p2.x, p2.y - 32);
    let since = await host.evaluate(() => window.hostrelayGame!.tick());
    await fingers.start({ id: 2, ...kick });
    await fingers.end();
    await kickedUp(since);

    // Both thumbs at once: Kick held while the stick runs the player up at the ball.
    const p3 = await atRest(host, slot);
    await placeBall(host, phone, p3.x, p3.y - 120);
    since = await host.evaluate(() => window.hostrelayGame!.tick());
    const thumb = { id: 4, ...kick };
    await fingers.start(thumb);
    await fingers.start(thumb, { id: 3, ...stick });
    await fingers.drag(3, stick, { x: stick.x, y: stick.y - 40 }, 6, [thumb]);
    await kickedUp(since);
    // Kick lifts and the stick still steers: dragged down through where it landed, the player turns back.
    await fingers.lift(thumb);
    await until(phone, () => !document.querySelector('.hr-touch-kick')!.classList.contains('hr-touch-held'), null);
    await fingers.drag(3, { x: stick.x, y: stick.y - 40 }, { x: stick.x, y: stick.y + 40 });
    await until(host, (id) => (window.hostrelayGame!.entities().find(([i]) => i === id)?.[1].vy ?? 0) > 100, slot);
    await fingers.end();
    expect(await phone.evaluate(() => window.scrollY), 'dragging on the controls scrolled the page').toBe(scrollY);
    await noSidewaysScroll(phone, 'the arena after play');
  });

  it('plays the pointer demo: a tap and a drag on the canvas reach the host', async () => {
    const { host, phone } = await startOnPhone('Pointer demo');
    const you = await phone.evaluate(() => window.hostrelay.you!);
    await until(phone, () => window.hostrelayPointer !== undefined && window.hostrelay.openPeers.length === 1, null);
    await noSidewaysScroll(phone, 'the pointer demo');
    expect(await phone.locator('#demo-help').textContent()).toContain('Touch and drag');

    await phone.locator('#demo-canvas').scrollIntoViewIfNeeded();
    const box = (await phone.locator('#demo-canvas').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    const spot = (fx: number, fy: number): { x: number; y: number } => ({ x: box.x + box.width * fx, y: box.y + box.height * fy });
    const hostSees = (fx: number, fy: number): Promise<void> =>
      until(host, (arg) => {
        const [id, x, y] = JSON.parse(arg) as [string, number, number];
        const p = window.hostrelayPointer?.remote().find(([i]) => i === id)?.[1];
        return !!p && Math.abs(p.x - x) < 0.02 && Math.abs(p.y - y) < 0.02;
      }, JSON.stringify([you, fx, fy]));
    const fingers = await TouchScreen.of(phone);
    const scrollY = await phone.evaluate(() => window.scrollY);

    // A tap, no drag: the marker goes where the finger landed.
    await fingers.start({ id: 0, ...spot(0.2, 0.7) });
    await fingers.end();
    await hostSees(0.2, 0.7);

    // A drag up and across (the way a page would scroll): the host follows the finger while it is down.
    await fingers.start({ id: 1, ...spot(0.3, 0.8) });
    await fingers.drag(1, spot(0.3, 0.8), spot(0.8, 0.25), 8);
    await hostSees(0.8, 0.25);
    mkdirSync(SHOTS, { recursive: true });
    await phone.screenshot({ path: `${SHOTS}/touch-pointer-phone.png` });
    await fingers.end();
    expect(await phone.evaluate(() => window.scrollY), 'dragging on the canvas scrolled the page').toBe(scrollY);
    await noSidewaysScroll(phone, 'the pointer demo after play');
  });
});
