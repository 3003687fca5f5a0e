import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// Bans that stick (issue 27), in the lobby app and the admin page against
// the real server: a host's kick with ban keeps a verified player out of
// the room on any session; an operator's server-wide ban ends a page's
// session and refuses it with the server's words; lifting it lets the
// player back in. Screenshots of the refusals and the admin page's bans go
// to $HOSTRELAY_SCREENSHOTS (test-results by default).

const SECRET = 'e2e-bans-secret-of-at-least-32-bytes-long';
const ADMIN = 'e2e-admin-token-0123456789abcdef';
const h = useHarness('bans', {
  serverArgs: [
    '-auth', 'optional', '-auth-hs256-secret', SECRET, '-admin-token', ADMIN,
    '-bans-file', join(mkdtempSync(join(tmpdir(), 'hostrelay-bans-')), 'bans.json'),
  ],
});
const SHOTS = process.env['HOSTRELAY_SCREENSHOTS'] ?? 'test-results';

function token(sub: string): string {
  const b64 = (v: object): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = b64({ alg: 'HS256', typ: 'JWT' });
  const body = b64({ sub, exp: Math.floor(Date.now() / 1000) + 600 });
  return `${head}.${body}.${createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url')}`;
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/** Opens the lobby with a token in the fragment, as a game's page would. */
async function openWithToken(page: Page, sub: string): Promise<void> {
  await page.goto(`${h.base}/#token=${token(sub)}`);
}

/** Waits for the page's error view with code and returns its words. */
async function refusedWith(page: Page, code: string): Promise<{ title: string; text: string }> {
  await until(page, (c) => window.hostrelay?.phase === 'error' && window.hostrelay.error?.code === c, code);
  return {
    title: await page.locator('#error-title').innerText(),
    text: await page.locator('#error-text').innerText(),
  };
}

/** Bans kind:target on the admin page's form and waits for the list to show it. */
async function banOnPage(admin: Page, kind: 'user' | 'ip', target: string, duration: string, reason: string): Promise<void> {
  await admin.selectOption('#ban-kind', kind);
  await admin.fill('#ban-target', target);
  await admin.selectOption('#ban-duration', duration);
  await admin.fill('#ban-reason', reason);
  await admin.click('#ban-button');
  await until(admin, (id) => document.querySelector(`#bans li[data-ban="${id}"]`) !== null, `${kind}:${target}`);
}

describe('bans', () => {
  it('a host’s ban keeps a verified player out of the room on every session', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Ranked' });
    const bob = await h.player('bob', { name: 'Bob' });
    await openWithToken(bob, 'user-bob');
    await until(bob, () => window.hostrelay?.connection === 'online', null);
    await joinByLink(bob, h.base, code);
    await until(host, () => window.hostrelay.players.length === 2, null);
    const bobId = await host.evaluate(() => window.hostrelay.players.find((p) => p.name === 'Bob')?.id ?? '');
    // The verified mark, and the host's Ban beside Kick for that player.
    expect(await host.locator('#players li', { hasText: 'Bob' }).locator('.verified').count()).toBe(1);
    const ban = host.locator(`button[data-kick="ban:${bobId}"]`);
    await shot(host, 'lobby-host-ban-button');
    await ban.click();
    await until(host, (id) => document.querySelector(`button[data-kick="ban:${id}"]`)?.textContent === 'Sure?', bobId);
    await host.locator(`button[data-kick="ban:${bobId}"]`).click();
    await refusedWith(bob, 'kicked');

    // The same share link again: a new session of the same user.
    await bob.goto(`${h.base}/r/${code}`);
    const again = await refusedWith(bob, 'room_banned');
    expect(again.title).toBe('Banned');
    expect(again.text).toBe(`The host banned you from room ${code} for as long as it lasts.`);
    expect(await bob.locator('#retry-button').isHidden()).toBe(true); // trying again cannot help
    await shot(bob, 'lobby-banned-from-room');

    // Another browser (no device in common), another name, the same user.
    const robert = await h.player('robert', { name: 'Robert' });
    await openWithToken(robert, 'user-bob');
    await until(robert, () => window.hostrelay?.connection === 'online', null);
    await robert.goto(`${h.base}/r/${code}`);
    expect((await refusedWith(robert, 'room_banned')).text).toContain(`banned you from room ${code}`);

    // Someone else still gets in.
    const cy = await h.player('cy', { name: 'Cy' });
    await openWithToken(cy, 'user-cy');
    await until(cy, () => window.hostrelay?.connection === 'online', null);
    await joinByLink(cy, h.base, code);
  });

  it('an operator’s ban ends a page’s session and refuses it until lifted', async () => {
    const eve = await h.player('eve', { name: 'Eve' });
    await openWithToken(eve, 'user-eve');
    await until(eve, () => window.hostrelay?.connection === 'online' && window.hostrelay.phase === 'lobby', null);

    const admin = await h.player('admin');
    await admin.goto(`${h.base}/admin`);
    await until(admin, () => document.body.dataset['phase'] === 'signin', null);
    await admin.fill('#token', ADMIN);
    await admin.click('#signin-button');
    await until(admin, () => document.body.dataset['phase'] === 'live', null);
    expect(await admin.locator('#bans-empty').isVisible()).toBe(true);

    // A network ban first (not ours: the page stays), then Eve's user.
    await banOnPage(admin, 'ip', '203.0.113.0/24', '168h', 'Scripted account farming');
    // A malformed target is refused under the form, in the server's words.
    await admin.fill('#ban-target', '203.0.113.0/4');
    await admin.click('#ban-button');
    await until(admin, () => !document.getElementById('ban-error')?.hidden, null);
    expect(await admin.locator('#ban-error').innerText()).toContain('too wide');

    await banOnPage(admin, 'user', 'user-eve', '1h', 'Cheating in ranked games');
    expect(await admin.locator('#ban-error').isHidden()).toBe(true);
    expect(await admin.locator('#bans li[data-ban="user:user-eve"] .reason').innerText()).toBe('Cheating in ranked games');
    expect(await admin.locator('#bans li[data-ban="user:user-eve"] .left').innerText()).toMatch(/^59 min left$|^1 h left$/);
    expect(await admin.locator('#bans-count').innerText()).toBe('2 of at most 10000');
    await shot(admin, 'admin-bans');

    // Eve's open page is told at once, in the server's words.
    const refused = await refusedWith(eve, 'banned');
    expect(refused.title).toBe('Banned');
    expect(await eve.locator('#conn').innerText()).toBe('Not connected');
    expect(refused.text).toMatch(/^Your user is banned from this server for (1 h|59 min) more: Cheating in ranked games\.$/);
    await shot(eve, 'lobby-banned-from-server');
    // A fresh page of hers is refused the same way.
    await eve.reload();
    await refusedWith(eve, 'banned');

    await admin.locator('#bans li[data-ban="user:user-eve"] button[data-lift]').click();
    await until(admin, () => document.querySelector('#bans li[data-ban="user:user-eve"]') === null, null);
    await eve.click('#retry-button'); // reloads
    await until(eve, () => window.hostrelay?.connection === 'online' && window.hostrelay.phase === 'lobby', null);
  });
});
