import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// The admin page (/admin) against the real server with -admin-token: it
// refuses without the token and with a wrong one; with it, it shows a live
// room made by two tabs (players, host, TURN allocations, relayed
// bandwidth), kicks a player (that tab is told it was removed) and closes
// the room (the tab left is told it closed). Screenshots of the page at
// 1280×800 and 390×844 go to test-results/admin-*.png.

const TOKEN = 'e2e-admin-token-0123456789abcdef';
const h = useHarness('admin', { serverArgs: ['-admin-token', TOKEN] });
const SHOTS = process.env['HOSTRELAY_SCREENSHOTS'] ?? 'test-results';

async function openAdmin(page: Page): Promise<void> {
  await page.goto(`${h.base}/admin`);
  await until(page, () => document.body.dataset['phase'] === 'signin' && !document.getElementById('view-signin')?.hidden, null);
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.fill('#token', token);
  await page.click('#signin-button');
}

/** Text of the figure `key` (e.g. "rooms") as shown. */
function figure(page: Page, key: string): Promise<string> {
  return page.locator(`[data-figure="${key}"] .value`).innerText();
}

/** Checks the page fits its width (nothing scrolls sideways) and saves a full-page PNG. */
async function shot(page: Page, name: string): Promise<void> {
  const { width } = page.viewportSize() ?? { width: 0 };
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} scrolls sideways`).toBeLessThanOrEqual(width);
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

describe('admin page', () => {
  it('refuses without the token and with a wrong one', async () => {
    const admin = await h.player('refused');
    await openAdmin(admin);
    // Without a token the page shows only the form, and the API it calls refuses the page.
    expect(await admin.isHidden('#view-live')).toBe(true);
    const bare = await admin.evaluate(async () => {
      const r = await fetch('/api/v1/admin/overview');
      return { status: r.status, body: (await r.json()) as { error: { code: string } } };
    });
    expect(bare).toEqual({ status: 401, body: { error: expect.objectContaining({ code: 'unauthenticated' }) } });

    await admin.click('#signin-button');
    await until(admin, () => !document.getElementById('signin-error')?.hidden, null);
    expect(await admin.textContent('#signin-error')).toBe('Enter the admin token.');

    await signIn(admin, `${TOKEN}-not`);
    await until(admin, () => document.getElementById('signin-error')?.textContent === 'That token is not valid.', null);
    expect(await admin.evaluate(() => document.body.dataset['phase'])).toBe('signin');
    expect(await admin.isHidden('#view-live')).toBe(true);
    expect(await admin.getAttribute('#token', 'aria-invalid')).toBe('true');
    // Nothing of a refused token is kept, and no token ever reaches the URL.
    expect(await admin.evaluate(() => sessionStorage.length)).toBe(0);
    expect(admin.url()).toBe(`${h.base}/admin`);
    expect(await admin.locator('#rooms li').count()).toBe(0);
    await shot(admin, 'admin-signin-refused');
  });

  it('shows a live room of two tabs, kicks a player and closes the room', async () => {
    // Ada hosts and starts a game with Bob, so the relay carries traffic; Lou has a private room alone.
    const ada = await h.player('ada', { name: 'Ada' });
    const code = await hostRoom(ada, h.base, { name: 'Friday night', max: 4 });
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    await until(ada, () => window.hostrelay.openPeers.length === 1, null);
    await bob.click('#ready-button');
    await until(ada, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
    await ada.click('#start-button');
    await until(bob, () => window.hostrelay.started, null);
    const lou = await h.player('lou', { name: 'Lou' });
    const louCode = await hostRoom(lou, h.base, { name: 'Members only', public: false, password: 'pw', max: 6 });

    const admin = await h.player('admin');
    await openAdmin(admin);
    await signIn(admin, TOKEN);
    await until(admin, () => document.body.dataset['phase'] === 'live', null);
    expect(await admin.evaluate(() => sessionStorage.getItem('hostrelay.admin.token'))).toBe(TOKEN);
    expect(admin.url()).toBe(`${h.base}/admin`);

    // The room as the tabs made it: players in join order, Ada the host, both on the relay.
    const room = admin.locator(`#rooms li[data-room="${code}"]`);
    await until(admin, (c) => document.querySelectorAll(`#rooms li[data-room="${c}"] .players li`).length === 2, code);
    expect(await room.locator('.rname').innerText()).toBe('Friday night');
    expect(await room.locator('.players .name').allInnerTexts()).toEqual(['Ada', 'Bob']);
    expect(await room.locator('[data-player="p1"] .badge.host').count()).toBe(1);
    expect(await room.locator('[data-player="p2"] .badge.host').count()).toBe(0);
    expect(await room.locator('.players-count').innerText()).toBe('2 / 4 players');
    // Every tab holds TURN allocations; the room's relayed rate shows once two polls are in, and the game keeps it above zero.
    await until(
      admin,
      (c) => /^[1-9]\d* TURN allocations$/.test(document.querySelector(`#rooms li[data-room="${c}"] .allocs`)?.textContent ?? ''),
      code,
    );
    await until(admin, (c) => /^[1-9][\d.]* [KMG]?B\/s$/.test(document.querySelector(`#rooms li[data-room="${c}"] .rate`)?.textContent ?? ''), code);
    expect(await admin.locator(`#rooms li[data-room="${louCode}"] .admin-room-head .badge`).allInnerTexts()).toEqual(['private', 'password']);
    expect(await figure(admin, 'rooms')).toBe('2');
    expect(await figure(admin, 'sessions')).toBe('3');
    expect(Number(await figure(admin, 'allocations'))).toBeGreaterThanOrEqual(2);
    expect(await figure(admin, 'relayed')).toMatch(/^[1-9][\d.]* [KMG]?B\/s$/);
    expect(await figure(admin, 'uptime')).toMatch(/^\d+ (s|min)$/);

    await shot(admin, 'admin-desktop');
    const phone = await h.player('admin-phone', { viewport: { width: 390, height: 844 }, phone: true });
    await openAdmin(phone);
    await signIn(phone, TOKEN);
    await until(phone, (c) => /^[1-9][\d.]* [KMG]?B\/s$/.test(document.querySelector(`#rooms li[data-room="${c}"] .rate`)?.textContent ?? ''), code);
    await shot(phone, 'admin-phone');
    await phone.close();

    // Kick Bob: two presses, the first arms the button.
    const kick = room.locator('[data-player="p2"] button[data-action]');
    await kick.click();
    expect(await kick.innerText()).toBe('Sure?');
    await kick.click();
    await until(bob, () => window.hostrelay.phase === 'error' && window.hostrelay.error?.code === 'operator_kicked', null);
    expect(await bob.textContent('#error-title')).toBe('Removed from the room');
    expect(await bob.isVisible('#retry-button')).toBe(false);
    await until(ada, () => window.hostrelay.players.length === 1, null);
    await until(admin, (c) => document.querySelectorAll(`#rooms li[data-room="${c}"] .players li`).length === 1, code);

    // Close the room: Ada, left in it, is told it closed; the list drops it.
    const close = room.locator('.admin-room-head button[data-action]');
    await close.click();
    expect(await close.innerText()).toBe('Close for everyone?');
    await close.click();
    await until(ada, () => window.hostrelay.phase === 'error' && window.hostrelay.error?.code === 'operator_closed', null);
    expect(await ada.textContent('#error-text')).toBe('The server’s operator closed this room.');
    await until(admin, (c) => document.querySelector(`#rooms li[data-room="${c}"]`) === null, code);
    expect(await figure(admin, 'rooms')).toBe('1');

    // Signing out forgets the token; a reload asks again.
    await admin.click('#signout-button');
    await until(admin, () => document.body.dataset['phase'] === 'signin', null);
    expect(await admin.evaluate(() => sessionStorage.length)).toBe(0);
    await openAdmin(admin);
  });
});
