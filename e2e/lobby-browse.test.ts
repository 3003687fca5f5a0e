import { describe, expect, it } from 'vitest';
import { hostRoom, until, useHarness } from './harness';

// Creating rooms and finding them: the create form's validation, the live
// room browser (rooms appear, fill and close without a reload; private rooms
// never show; the filter; the empty state), and joining from the list or by
// a typed code.

const h = useHarness('lobby-browse');

describe('create a room', () => {
  it('validates the form, then creates a room with its settings', async () => {
    const page = await h.player('host');
    await page.goto(`${h.base}/`);
    await until(page, () => window.hostrelay?.phase === 'lobby' && window.hostrelay.connection === 'online', null);
    // First visit: the name is asked for (the empty name field has focus).
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('create-name');

    await page.fill('#max-players', '17');
    await page.click('#create-button');
    expect(await page.isVisible('#name-error')).toBe(true);
    expect(await page.textContent('#name-error')).toContain('Pick a name');
    await page.fill('#create-name', 'x'.repeat(33)); // maxlength stops at 32…
    expect(await page.inputValue('#create-name')).toHaveLength(32);
    await page.fill('#create-name', 'Ada');
    await page.click('#create-button');
    expect(await page.textContent('#max-players-error')).toContain('from 2 to 16');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('max-players');

    await page.fill('#max-players', '6');
    await page.fill('#room-name', 'Lunch league');
    await page.selectOption('#room-mode', 'Arena');
    await page.fill('#room-password', 'hunter2');
    await page.click('#create-button');
    await until(page, () => window.hostrelay.phase === 'room', null);
    const s = await page.evaluate(() => window.hostrelay);
    expect(s.role).toBe('host');
    expect(s.room).toMatchObject({ name: 'Lunch league', maxPlayers: 6, mode: 'Arena', hasPassword: true, public: true });
    expect(await page.textContent('#room-code-out')).toBe(s.roomCode);
    expect(await page.inputValue('#share-link')).toBe(`${h.base}/r/${s.roomCode}`);
    expect(await page.getAttribute('#share-qr', 'src')).toMatch(/^data:image\/svg\+xml/);
    expect(await page.isVisible('#room-lock')).toBe(true);
    expect(await page.title()).toBe(`Lunch league (${s.roomCode}) · hostrelay`);
    // The name is remembered for next time.
    expect(await page.evaluate(() => localStorage.getItem('hostrelay.name'))).toBe('Ada');

    // Copy puts the share link on the clipboard and says so.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.base });
    await page.click('#copy-button');
    await until(page, () => document.getElementById('copy-status')?.textContent?.includes('Link copied') ?? false, null);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${h.base}/r/${s.roomCode}`);
    expect(await page.textContent('#copy-button')).toBe('Copied');
  });

  it('remembers the name, and an edited name is used and remembered in its place', async () => {
    const page = await h.player('host', { name: 'Ada' });
    await page.goto(`${h.base}/`);
    await until(page, () => window.hostrelay?.connection === 'online', null);
    expect(await page.inputValue('#create-name')).toBe('Ada');

    await page.fill('#create-name', 'Ada Lovelace');
    await page.fill('#room-name', 'Renamed');
    await page.click('#create-button');
    await until(page, () => window.hostrelay.phase === 'room', null);
    expect(await page.evaluate(() => window.hostrelay.players.map((p) => p.name))).toEqual(['Ada Lovelace']);
    expect(await page.evaluate(() => localStorage.getItem('hostrelay.name'))).toBe('Ada Lovelace');

    // Leaving loads the lobby page afresh: it offers the new name.
    await page.click('#leave-button');
    await until(page, () => window.hostrelay?.phase === 'lobby', null);
    expect(await page.inputValue('#create-name')).toBe('Ada Lovelace');
  });
});

describe('room browser', () => {
  it('shows public rooms live: appear, fill, filter, close; private rooms never', async () => {
    const watcher = await h.player('watcher');
    await watcher.goto(`${h.base}/`);
    await until(watcher, () => window.hostrelay?.roomsLoaded === true, null);
    expect(await watcher.textContent('#rooms-empty')).toContain('No public rooms');

    const alpha = await h.player('alpha', { name: 'Ada' });
    // Not migrating, so the room closes when its host leaves (the end of this test).
    const code = await hostRoom(alpha, h.base, { name: 'Alpha squad', max: 4, mode: 'Pointer demo', migrate: false });
    const secret = await h.player('secret', { name: 'Sid' });
    await hostRoom(secret, h.base, { name: 'Secret', public: false });
    const locked = await h.player('locked', { name: 'Lou' });
    const lockedCode = await hostRoom(locked, h.base, { name: 'Members only', password: 'pw', migrate: false });

    // Alpha appears without a reload; Secret never does.
    await until(watcher, (c) => window.hostrelay.rooms.some((r) => r.code === c), code);
    const row = watcher.locator(`#room-list button[data-code="${code}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('Alpha squad');
    expect(await row.textContent()).toContain('hosted by Ada');
    expect(await row.textContent()).toContain('Pointer demo');
    expect(await row.textContent()).toContain('1/4');
    // A public room with a password is listed with a padlock; one without has none.
    await until(watcher, (c) => window.hostrelay.rooms.some((r) => r.code === c), lockedCode);
    const lockedRow = watcher.locator(`#room-list button[data-code="${lockedCode}"]`);
    await lockedRow.waitFor();
    expect(await lockedRow.locator('svg.lock[aria-label="password"]').count()).toBe(1);
    expect(await row.locator('svg.lock').count()).toBe(0);
    await locked.click('#leave-button');
    await until(watcher, (c) => !window.hostrelay.rooms.some((r) => r.code === c), lockedCode);
    expect(await watcher.evaluate(() => window.hostrelay.rooms.map((r) => r.name))).toEqual(['Alpha squad']);

    // Someone joins: the count goes up live.
    const bob = await h.player('bob', { name: 'Bob' });
    await bob.goto(`${h.base}/r/${code}`); // a remembered name joins by itself
    await until(watcher, (c) => window.hostrelay.rooms.find((r) => r.code === c)?.players === 2, code);
    await until(watcher, (c) => document.querySelector(`#room-list button[data-code="${c}"]`)?.textContent?.includes('2/4') ?? false, code);

    // The filter narrows the list by name.
    await watcher.fill('#room-filter', 'zzz');
    expect(await watcher.locator('#room-list li').count()).toBe(0);
    expect(await watcher.textContent('#rooms-empty')).toContain('No room matches');
    await watcher.fill('#room-filter', 'ALPHA');
    expect(await watcher.locator('#room-list li').count()).toBe(1);
    await watcher.fill('#room-filter', '');

    // The host leaves: the room closes and leaves the list.
    await alpha.click('#leave-button');
    await until(watcher, () => window.hostrelay.rooms.length === 0, null);
    await until(watcher, () => !document.getElementById('rooms-empty')?.hidden, null);
  });

  it('joins from the list in one click, and by a typed code', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Click me' });

    const grace = await h.player('grace', { name: 'Grace' });
    await grace.goto(`${h.base}/`);
    await until(grace, (c) => window.hostrelay?.rooms.some((r) => r.code === c) ?? false, code);
    await grace.click(`#room-list button[data-code="${code}"]`);
    await until(grace, () => window.hostrelay.phase === 'room', null);
    expect(new URL(grace.url()).pathname).toBe(`/r/${code}`);

    // A code typed in lower case with a dash still works.
    const linus = await h.player('linus', { name: 'Linus' });
    await linus.goto(`${h.base}/`);
    await until(linus, () => window.hostrelay?.connection === 'online', null);
    await linus.fill('#room-code', 'nope');
    await linus.click('#code-button');
    expect(await linus.textContent('#code-error')).toContain('7 letters');
    await linus.fill('#room-code', `${code.slice(0, 3).toLowerCase()}-${code.slice(3)}`);
    await linus.click('#code-button');
    await until(linus, () => window.hostrelay.phase === 'room', null);
    await until(host, () => window.hostrelay.players.length === 3, null);
    expect(await host.evaluate(() => window.hostrelay.players.map((p) => p.name))).toEqual(['Ada', 'Grace', 'Linus']);
  });
});
