import type { WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// Joining and being turned away: share links, passwords, full rooms, codes
// that do not exist, kicks that stick, a host who leaves, and the
// reconnecting banner when the lobby connection drops. Every refusal must be
// a sentence a player understands.
//
// Failed joins are rate-limited per IP (10, then one per 6 s) and every page
// here is 127.0.0.1: this file spends 3.

const h = useHarness('lobby-join');

describe('join by link', () => {
  it('joins at once with a remembered name; a first visit asks for the name first', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Open door' });

    const grace = await h.player('grace', { name: 'Grace' });
    await grace.goto(`${h.base}/r/${code}`);
    await until(grace, () => window.hostrelay?.phase === 'room' && window.hostrelay.openPeers.length === 1, null);
    expect(await grace.evaluate(() => window.hostrelay.players.map((p) => p.name))).toEqual(['Ada', 'Grace']);

    const fresh = await h.player('fresh'); // no name remembered
    await fresh.goto(`${h.base}/r/${code}`);
    await until(fresh, () => window.hostrelay?.phase === 'name' && window.hostrelay.connection === 'online', null);
    expect(await fresh.inputValue('#join-name')).toBe('');
    expect(await host.evaluate(() => window.hostrelay.players.length)).toBe(2);
    await fresh.fill('#join-name', 'Hedy');
    await fresh.click('#join-button');
    await until(fresh, () => window.hostrelay.phase === 'room', null);
    await until(host, () => window.hostrelay.players.length === 3, null);
  });

  it('asks for the password, refuses a wrong one, takes the right one', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Locked', password: 's3cret', public: false });

    const grace = await h.player('grace', { name: 'Grace' });
    await grace.goto(`${h.base}/r/${code}`);
    // The remembered name joins without a click; the room asks for its password.
    await until(grace, () => window.hostrelay?.needsPassword === true, null);
    expect(await grace.title()).toBe(`Join ${code} · hostrelay`);
    expect(await grace.inputValue('#join-name')).toBe('Grace');
    expect(await grace.evaluate(() => window.hostrelay.phase)).toBe('name');
    expect(await grace.isVisible('#join-password')).toBe(true);
    expect(await grace.evaluate(() => document.activeElement?.id)).toBe('join-password');

    await grace.fill('#join-password', 'wrong');
    await grace.click('#join-button');
    await until(grace, () => document.getElementById('join-error')?.textContent?.includes('not right') ?? false, null);
    expect(await grace.evaluate(() => window.hostrelay.phase)).toBe('name');

    await grace.fill('#join-password', 's3cret');
    await grace.click('#join-button');
    await until(grace, () => window.hostrelay.phase === 'room', null);
    await until(host, () => window.hostrelay.players.length === 2, null);
  });

  it('says the room is full', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Duel', max: 2 });
    await joinByLink(await h.player('bob', { name: 'Bob' }), h.base, code);

    const late = await h.player('late', { name: 'Late' });
    await late.goto(`${h.base}/r/${code}`);
    await until(late, () => window.hostrelay?.phase === 'error', null);
    expect(await late.textContent('#error-title')).toBe('Room is full');
    expect(await late.textContent('#error-text')).toContain('This room is full');
    expect(await late.isVisible('#retry-button')).toBe(true);
  });

  it('says a code leads nowhere', async () => {
    const eve = await h.player('eve', { name: 'Eve' });
    await eve.goto(`${h.base}/`);
    await until(eve, () => window.hostrelay?.connection === 'online', null);
    await eve.fill('#room-code', 'ZZZZZZZ');
    await eve.click('#code-button');
    await until(eve, () => window.hostrelay.phase === 'error', null);
    expect(await eve.textContent('#error-title')).toBe('Room not found');
    expect(await eve.title()).toBe('Room not found · hostrelay');
    // A link with a malformed code is not worth a request.
    await eve.goto(`${h.base}/r/not-a-code`);
    await until(eve, () => window.hostrelay?.phase === 'error', null);
    expect(await eve.textContent('#error-title')).toBe('Room not found');
  });
});

describe('kick and host left', () => {
  it('kicks a player, who cannot come back with the same link', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Strict' });
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    const cy = await h.player('cy', { name: 'Cy' });
    await joinByLink(cy, h.base, code);
    await until(host, () => window.hostrelay.players.length === 3, null);

    // Only the host sees kick buttons.
    expect(await bob.locator('button[data-kick]').count()).toBe(0);
    const bobId = await bob.evaluate(() => window.hostrelay.you ?? '');
    const kick = host.locator(`button[data-kick="${bobId}"]`);
    expect(await kick.getAttribute('aria-label')).toBe('Kick Bob');
    await kick.click(); // arms: "Sure?"
    await until(host, (id) => document.querySelector(`button[data-kick="${id}"]`)?.textContent === 'Sure?', bobId);
    await host.locator(`button[data-kick="${bobId}"]`).click();

    await until(bob, () => window.hostrelay.phase === 'error', null);
    expect(await bob.textContent('#error-title')).toBe('Removed from the room');
    expect(await bob.textContent('#error-text')).toContain('removed you');
    await until(host, () => window.hostrelay.players.length === 2, null);
    await until(cy, () => window.hostrelay.players.length === 2, null);

    // Same link, same browser: refused, with the same words.
    await bob.goto(`${h.base}/r/${code}`);
    await until(bob, () => window.hostrelay?.phase === 'error', null);
    expect(await bob.evaluate(() => window.hostrelay.error?.code)).toBe('kicked');
  });

  it('tells the players when the host of a room without migration leaves', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Short lived', migrate: false });
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    await host.click('#leave-button');
    await until(bob, () => window.hostrelay.phase === 'error', null);
    expect(await bob.textContent('#error-title')).toBe('Room closed');
    expect(await bob.textContent('#error-text')).toContain('The host left');
  });

  it('hands a migrating room to the longest-present player when the host leaves, before the game too', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Staying open' }); // the form's default: migrate
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    const cy = await h.player('cy', { name: 'Cy' });
    await joinByLink(cy, h.base, code);
    const bobId = await bob.evaluate(() => window.hostrelay.you ?? '');
    await host.click('#leave-button');
    for (const p of [bob, cy]) {
      await until(p, (id) => window.hostrelay.room?.host === id && window.hostrelay.players.length === 2, bobId);
      expect(await p.evaluate(() => window.hostrelay.phase)).toBe('room');
      // The host marker moved to Bob, and there is one.
      await until(p, (id) => document.querySelectorAll(`#players li[data-player-id="${id}"] .badge.host`).length === 1, bobId);
      expect(await p.locator('#players .badge.host').count()).toBe(1);
    }
    // Bob has the host's controls now; Cy connects to Bob.
    expect(await bob.textContent('#role-out')).toBe('the host');
    expect(await bob.isVisible('#start-button')).toBe(true);
    expect(await bob.isVisible('#ready-button')).toBe(false);
    await until(cy, (id) => window.hostrelay.openPeers.includes(id), bobId);
    await until(bob, () => window.hostrelay.openPeers.length === 1, null);
    await cy.click('#ready-button');
    await until(bob, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
  });
});

describe('connection', () => {
  it('says the server is unreachable, keeps trying, and recovers', async () => {
    const page = await h.player('offline', { name: 'Olga' });
    let block = true;
    // Every lobby WebSocket is closed at once, as if the server were down.
    await page.routeWebSocket(/\/ws$/, (ws) => {
      if (block) ws.close();
      else ws.connectToServer();
    });
    await page.goto(`${h.base}/`);
    await until(page, () => window.hostrelay?.connection === 'reconnecting' && window.hostrelay.retryInMs !== null, null);
    expect(await page.isVisible('#banner')).toBe(true);
    expect(await page.textContent('#banner-text')).toContain('Can’t reach the server');
    expect(await page.textContent('#conn')).toBe('Reconnecting…');
    expect(await page.textContent('#rooms-empty')).toContain('Waiting for the server');
    await page.fill('#room-code', 'ABC2345');
    await page.click('#code-button');
    await until(page, () => window.hostrelay.phase === 'name', null);
    await page.click('#join-button');
    await until(page, () => document.getElementById('join-error')?.textContent?.includes('Cannot reach') ?? false, null);

    // "Retry now" dials at once; the scheduled retry may beat the click to it.
    block = false;
    await page.click('#banner-retry', { timeout: 2_000 }).catch(() => undefined);
    await until(page, () => window.hostrelay.connection === 'online', null);
    expect(await page.isVisible('#banner')).toBe(false);
  });

  it('takes the seat back after a network cut: same player, game link kept, the others see "away" meanwhile', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Flaky wifi' });
    const bob = await h.player('bob', { name: 'Bob' });
    // Bob's lobby WebSocket goes through the test, which can cut it (close
    // code 4000 on both sides: no clean close, so the server holds the seat)
    // and refuse new ones for a while.
    let refuse = false;
    const cuts: (() => Promise<void>)[] = [];
    await bob.routeWebSocket(/\/ws$/, (ws: WebSocketRoute) => {
      if (refuse) {
        void ws.close({ code: 4000, reason: 'network down' });
        return;
      }
      const server = ws.connectToServer();
      cuts.push(async () => {
        await server.close({ code: 4000, reason: 'cut' });
        await ws.close({ code: 4000, reason: 'cut' });
      });
    });
    await joinByLink(bob, h.base, code);
    const bobId = await bob.evaluate(() => window.hostrelay.you ?? '');
    await until(bob, () => window.hostrelay.openPeers.length === 1, null);

    refuse = true;
    await cuts[0]?.();
    await until(bob, () => window.hostrelay.connection === 'reconnecting', null);
    expect(await bob.isVisible('#banner')).toBe(true);
    await until(host, (id) => window.hostrelay.players.find((p) => p.id === id)?.away === true, bobId);
    await until(host, () => document.querySelector('#players .badge.away') !== null, null);

    refuse = false;
    await until(bob, () => window.hostrelay.connection === 'online', null, 20_000);
    await until(host, (id) => window.hostrelay.players.find((p) => p.id === id)?.away === false, bobId);
    // The same seat: same id, nobody left or joined, and the data channel to the host never closed.
    expect(await bob.evaluate(() => [window.hostrelay.phase, window.hostrelay.you, window.hostrelay.openPeers.length])).toEqual([
      'room',
      bobId,
      1,
    ]);
    expect(await host.evaluate(() => window.hostrelay.players.map((p) => p.name))).toEqual(['Ada', 'Bob']);
    // The lobby works on the resumed session.
    await bob.fill('#chat-input', 'back');
    await bob.press('#chat-input', 'Enter');
    await until(host, () => window.hostrelay.chat.some((m) => m.text === 'back'), null);
  });

  it('starts a new session when the server forgets ours, and a client gets back into its room', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Bumpy' });
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    await until(host, () => window.hostrelay.players.length === 2, null);

    await bob.evaluate(() => window.hostrelayTest.dropConnection());
    await until(bob, () => window.hostrelay.connection === 'reconnecting', null);
    expect(await bob.isVisible('#banner')).toBe(true);
    expect(await bob.textContent('#banner-text')).toMatch(/Reconnecting|Retrying/);
    await bob.click('#banner-retry', { timeout: 2_000 }).catch(() => undefined); // may already be back
    await until(bob, () => window.hostrelay.connection === 'online', null);
    await until(bob, () => window.hostrelay.phase === 'room' && window.hostrelay.players.length === 2, null);
    await until(bob, () => document.getElementById('banner')?.hidden ?? false, null);
    // The host saw Bob leave and come back with a new player id.
    await until(host, () => window.hostrelay.players.length === 2 && window.hostrelay.players[1]?.id !== 'p2', null);
  });
});
