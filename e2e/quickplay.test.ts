import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { until, useHarness } from './harness';

// Play now in Chromium: two tabs that press it for one game land in the
// same room, the first as its host; a friend who opens a party link is
// brought along when the party's leader presses Play now. The lobby with the
// Play now card is saved to test-results/ at a phone's and a laptop's size.

const h = useHarness('quickplay');

async function lobby(label: string, name: string, viewport?: { width: number; height: number }) {
  const page = await h.player(label, { name, viewport });
  await page.goto(`${h.base}/`);
  await until(page, () => window.hostrelay?.connection === 'online', null);
  return page;
}

const roomCode = (page: Awaited<ReturnType<typeof lobby>>): Promise<string> => page.evaluate(() => window.hostrelay.roomCode ?? '');

describe('play now', () => {
  it('puts two tabs that press it in the same room', async () => {
    const ada = await lobby('ada', 'Ada', { width: 1280, height: 800 });
    mkdirSync('test-results', { recursive: true });
    await ada.screenshot({ path: 'test-results/quickplay-lobby-1280x800.png', fullPage: true });
    await ada.selectOption('#quick-mode', 'Pointer demo');
    await ada.click('#quick-button');
    await until(ada, () => window.hostrelay.phase === 'room', null);
    expect(await ada.evaluate(() => window.hostrelay.role)).toBe('host');

    const bob = await lobby('bob', 'Bob', { width: 390, height: 844 });
    await bob.screenshot({ path: 'test-results/quickplay-lobby-390x844.png', fullPage: true });
    await bob.selectOption('#quick-mode', 'Pointer demo');
    await bob.click('#quick-button');
    await until(bob, () => window.hostrelay.phase === 'room', null);
    expect(await roomCode(bob)).toBe(await roomCode(ada));
    expect(await bob.evaluate(() => window.hostrelay.role)).toBe('client');
    await until(ada, () => window.hostrelay.players.length === 2, null);
  });

  it('brings a friend who opened the party link along', async () => {
    const lea = await lobby('lea', 'Lea');
    await lea.click('#party-create');
    await until(lea, () => (document.querySelector<HTMLInputElement>('#party-link')?.value ?? '') !== '', null);
    const partyLink = await lea.inputValue('#party-link');
    expect(partyLink).toMatch(/\/\?party=[2-9A-Z]{7}$/);

    const finn = await h.player('finn', { name: 'Finn' });
    await finn.goto(partyLink);
    await until(finn, () => document.querySelectorAll('#party-members li').length === 2, null);
    // Only the leader starts; the friend's button says who will.
    expect(await finn.isDisabled('#quick-button')).toBe(true);
    await until(lea, () => document.querySelectorAll('#party-members li').length === 2, null);
    await lea.screenshot({ path: 'test-results/quickplay-party-leader.png', fullPage: true });

    await lea.selectOption('#quick-mode', 'Arena');
    await lea.click('#quick-button');
    await until(lea, () => window.hostrelay.phase === 'room', null);
    await until(finn, () => window.hostrelay.phase === 'room', null);
    expect(await roomCode(finn)).toBe(await roomCode(lea));
    await until(lea, () => window.hostrelay.players.length === 2, null);
  });
});
