import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// Inside a room: chat (rendered as text, length- and rate-limited), ready
// then start (the game mounts on every tab), names told apart, and the
// page's quality bar: a phone screen without sideways scrolling, no layout
// shift while rooms load, and keyboard focus that can be seen.

const h = useHarness('lobby-room');

describe('chat', () => {
  it('relays lines to everyone and shows an HTML injection attempt as text', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Chatty' });
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);

    const attack = '<img src=x onerror="window.pwned=1"><b>bold</b>';
    await bob.fill('#chat-input', attack);
    await bob.press('#chat-input', 'Enter');
    for (const page of [host, bob]) {
      await until(page, () => window.hostrelay.chat.length === 1, null);
      await until(page, () => (document.querySelector('#chat-log li .text')?.textContent ?? '') !== '', null);
      expect(await page.textContent('#chat-log li .text')).toBe(attack);
      expect(await page.textContent('#chat-log li .who')).toBe('Bob');
      expect(await page.locator('#chat-log img, #chat-log b').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    }
    expect(await bob.inputValue('#chat-input')).toBe('');

    // The input stops at 200 characters; a burst past the rate limit is told to slow down.
    expect(await bob.getAttribute('#chat-input', 'maxlength')).toBe('200');
    // Twelve lines submitted in one go: the server takes at most 8 (its burst).
    await bob.evaluate(() => {
      const input = document.getElementById('chat-input') as HTMLInputElement;
      const form = document.getElementById('chat-form') as HTMLFormElement;
      for (let i = 0; i < 12; i++) {
        input.value = `line ${i}`;
        form.requestSubmit();
      }
    });
    await until(bob, () => document.getElementById('chat-error')?.textContent?.includes('too fast') ?? false, null);
    await until(host, () => window.hostrelay.chat.some((m) => m.text === 'line 6'), null);
    expect(await host.evaluate(() => window.hostrelay.chat.some((m) => ['line 8', 'line 11'].includes(m.text)))).toBe(false);
  });
});

describe('ready and start', () => {
  it('starts once every player is ready and mounts the game on every tab', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Game night', mode: 'Pointer demo' });
    expect(await host.isDisabled('#start-button')).toBe(true); // nobody to play with yet
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    // Two players named Ada are told apart.
    const ada2 = await h.player('ada2', { name: 'ada' });
    await joinByLink(ada2, h.base, code);
    await until(host, () => window.hostrelay.players.length === 3, null);
    expect(await host.evaluate(() => window.hostrelay.players.map((p) => p.name))).toEqual(['Ada', 'Bob', 'ada (2)']);

    // Each player's ping shows once measured.
    await until(host, () => window.hostrelay.players.every((p) => p.ping > 0), null);
    await until(host, () => [...document.querySelectorAll('#players .ping')].every((e) => /\d+ ms/.test(e.textContent ?? '')), null);

    expect(await bob.isVisible('#start-button')).toBe(false);
    await bob.click('#ready-button');
    await until(host, () => window.hostrelay.players.find((p) => p.name === 'Bob')?.ready === true, null);
    expect(await host.isDisabled('#start-button')).toBe(true); // ada (2) is not ready
    expect(await host.textContent('#ready-hint')).toContain('ada (2)');
    await ada2.click('#ready-button');
    await until(host, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
    expect(await bob.getAttribute('#ready-button', 'aria-pressed')).toBe('true');

    await host.click('#start-button');
    for (const page of [host, bob, ada2]) {
      await until(page, () => window.hostrelay.started, null);
      await page.locator('#game #demo-canvas').waitFor();
      expect(await page.isVisible('#share-card')).toBe(false);
      expect(await page.title()).toBe(`▶ Game night (${code}) · hostrelay`);
    }
    await until(bob, () => window.hostrelay.openPeers.length === 1, null);
  });
});

describe('quality', () => {
  it('fits a 390×844 phone, does not shift while rooms load, and shows keyboard focus', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'A room with quite a long name to wrap on a phone' });

    const phone = await h.player('phone', { name: 'Pat', viewport: { width: 390, height: 844 } });
    await phone.addInitScript(() => {
      const w = window as unknown as { cls: number };
      w.cls = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean })[]) {
          if (!e.hadRecentInput) w.cls += e.value;
        }
      }).observe({ type: 'layout-shift', buffered: true });
    });
    await phone.goto(`${h.base}/`);
    await until(phone, (c) => window.hostrelay?.rooms.some((r) => r.code === c) ?? false, code);
    await phone.locator(`#room-list button[data-code="${code}"]`).waitFor();
    expect(await phone.evaluate(() => (window as unknown as { cls: number }).cls)).toBeLessThan(0.02);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await phone.getAttribute('link[rel=icon]', 'href')).toBe('/favicon.png');
    expect((await phone.request.get(`${h.base}/favicon.png`)).headers()['content-type']).toBe('image/png');
    expect((await phone.request.get(`${h.base}/favicon.svg`)).status()).toBe(200); // kept for anyone who links it
    // The header's mark is drawn inline, not an <img> (each SVG image is a document to build).
    expect(await phone.locator('header .brand svg').count()).toBe(1);

    // Keyboard: Tab moves from the name field to its Save button, with a visible ring.
    await phone.focus('#create-name');
    await phone.keyboard.press('Tab');
    expect(await phone.evaluate(() => document.activeElement?.id)).toBe('name-save');
    expect(await phone.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle)).toBe('solid');

    // The room view fits the phone too; Enter on a focused room joins it.
    await phone.focus(`#room-list button[data-code="${code}"]`);
    await phone.keyboard.press('Enter');
    await until(phone, () => window.hostrelay.phase === 'room', null);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });
});
