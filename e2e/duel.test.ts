import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// The kickball duel in two real Chromium tabs, through the real server and
// its TURN relay, once per mode (the room's mode picks it). The client's
// conditioner adds 100 ms each way, 20 ms jitter and 10 % loss, set from the
// game's Network menu; both autopilots play for 5 s of frames. Both tabs
// must hold the same hash for the same confirmed frame, report no desync,
// and the netgraph must show what the mode does: rollbacks in rollback,
// none in lockstep (where the host fills late inputs instead).

const h = useHarness('duel');
const PLAY_FRAMES = 300; // 5 s at 60 fps
const BAD_NET = '100 ms, 20 ms jitter, 10 % loss';

async function startDuel(mode: 'Duel (rollback)' | 'Duel (lockstep)', phone: boolean): Promise<{ host: Page; client: Page; errors: string[] }> {
  const errors: string[] = [];
  const watch = (page: Page, label: string): void => {
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${label}: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`${label}: ${e.message}`));
  };
  const host = await h.player('host', { name: 'Ada' });
  watch(host, 'host');
  const code = await hostRoom(host, h.base, { name: mode, mode, max: 2 });
  const client = await h.player('client', phone ? { name: 'Grace', viewport: { width: 390, height: 844 }, phone: true } : { name: 'Grace' });
  watch(client, 'client');
  await joinByLink(client, h.base, code);
  await client.click('#ready-button');
  await until(host, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
  await host.click('#start-button');
  for (const page of [host, client]) await until(page, () => (window.hostrelayDuel?.slot() ?? -1) >= 0, null, 30_000);
  return { host, client, errors };
}

/** Plays PLAY_FRAMES frames with both autopilots and the client on a bad network; checks what both modes share. */
async function play(host: Page, client: Page): Promise<void> {
  for (const page of [host, client]) {
    expect(await page.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);
  }
  await client.selectOption('#hr-duel-net', BAD_NET);
  for (const page of [host, client]) await page.check('#hr-duel-autopilot');
  await inStep(host, client, PLAY_FRAMES);
  for (const page of [host, client]) {
    expect(await page.evaluate(() => window.hostrelayDuel!.phase())).toBe('running');
    expect(await page.evaluate(() => window.hostrelayDuel!.desyncs())).toEqual([]);
  }
  // The round trip includes the 200 ms the conditioner adds.
  expect(await client.evaluate(() => window.hostrelayDuel!.stats().rttMs)).toBeGreaterThan(150);
}

async function shoot(pages: [string, Page][]): Promise<void> {
  const dir = process.env['HOSTRELAY_SCREENSHOTS'] ?? 'test-results';
  mkdirSync(dir, { recursive: true });
  for (const [name, page] of pages) await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
}

describe('the duel', () => {
  it('in rollback: both tabs reach the same hash at 100 ms each way, 10 % loss, and the netgraph shows rollbacks', async () => {
    const { host, client, errors } = await startDuel('Duel (rollback)', false);
    for (const page of [host, client]) expect(await page.evaluate(() => window.hostrelayDuel!.mode())).toBe('rollback');
    await play(host, client);
    const s = await client.evaluate(() => window.hostrelayDuel!.stats());
    expect(s.rollbacks).toBeGreaterThan(0);
    expect(s.framesResimulated).toBeGreaterThanOrEqual(s.rollbacks);
    // 200 ms of round trip is past what the 10-frame window covers with 2 frames of
    // delay: the client raises its own input delay so its inputs still reach the
    // host in time. Before it did, the host filled 295 of the client's inputs in 328 frames.
    // How many still come late here depends on how steadily two tabs get the CPU (a
    // busy machine saw 97 and 141 against a bound of 75), so this bound only
    // tells "raised" from "never raised" (90 %); the exact figure (at most 60 in 10
    // minutes, late only in loss bursts from 5 s after the step) is held on simulated time in
    // web/packages/netcode/src/lockstep/session.test.ts.
    const late = await host.evaluate(() => window.hostrelayDuel!.stats().lateInputs[1] ?? 0);
    const hostFrame = await host.evaluate(() => window.hostrelayDuel!.stats().frame);
    console.log(`duel rollback: host filled ${late} of the client's inputs in ${hostFrame} frames; client input delay ${s.inputDelay}, RTT ${s.rttMs.toFixed(0)} ms`);
    expect(s.inputDelay).toBeGreaterThan(2);
    expect(late).toBeLessThan(hostFrame / 2);
    // The netgraph says so in words, refreshed four times a second.
    await until(client, () => /rollbacks [1-9]/.test(document.querySelector('.hr-duel-netgraph pre')?.textContent ?? ''), null);
    expect(await client.textContent('.hr-duel-netgraph pre')).toMatch(/^rollback · frame/);
    await shoot([
      ['duel-rollback-host', host],
      ['duel-rollback-client', client],
    ]);
    expect(errors).toEqual([]);
  });

  it('in lockstep: both tabs reach the same hash, a phone plays it, and nothing rolls back', async () => {
    const { host, client, errors } = await startDuel('Duel (lockstep)', true);
    for (const page of [host, client]) expect(await page.evaluate(() => window.hostrelayDuel!.mode())).toBe('lockstep');
    // The phone gets the stick and Kick.
    expect(await client.isVisible('.hr-duel-touch')).toBe(true);
    await play(host, client);
    for (const page of [host, client]) expect(await page.evaluate(() => window.hostrelayDuel!.stats().rollbacks)).toBe(0);
    await until(client, () => /^lockstep · frame/.test(document.querySelector('.hr-duel-netgraph pre')?.textContent ?? ''), null);
    await shoot([
      ['duel-lockstep-host', host],
      ['duel-lockstep-phone', client],
    ]);
    expect(errors).toEqual([]);
  });
});

/** Lets both autopilots play `frames` more frames (on `b`'s count), then checks both tabs hold the same state: the hash after a frame both confirmed. */
async function inStep(a: Page, b: Page, frames: number): Promise<void> {
  const from = await b.evaluate(() => window.hostrelayDuel!.stats().confirmedFrame);
  await until(b, (end) => window.hostrelayDuel!.stats().confirmedFrame >= end, from + frames, 30_000);
  const confirmed = await Promise.all([a, b].map((p) => p.evaluate(() => window.hostrelayDuel!.stats().confirmedFrame)));
  const frame = Math.min(...confirmed) - 10;
  const hashes = await Promise.all([a, b].map((p) => p.evaluate((f) => window.hostrelayDuel!.hashAt(f), frame)));
  expect(hashes[0]).not.toBeNull();
  expect(hashes[1]).toBe(hashes[0]);
}

// Issue 29: the host switches the mode mid-match from the Mode menu; a
// forced desync heals with the host's state; a tab cut off for longer than
// the stall timeout resumes; and since the duel seats two, a late joiner is
// whoever joins the room after a player left: they take the empty seat.
describe('the duel mid-match', () => {
  it('switches rollback → lockstep → rollback from the host\'s Mode menu, heals a forced desync, and the netgraph counts it all', async () => {
    const { host, client, errors } = await startDuel('Duel (rollback)', false);
    // What each tab says of its resyncs and failures, printed with the figures.
    const said: string[] = [];
    for (const [name, page] of [['host', host], ['client', client]] as const) page.on('console', (m) => /^duel: (sent|playing on|the match stopped)/.test(m.text()) && said.push(`${name} ${m.text()}`));
    await client.selectOption('#hr-duel-net', BAD_NET);
    for (const page of [host, client]) await page.check('#hr-duel-autopilot');
    await inStep(host, client, 120);
    // The client's menu shows the mode and cannot change it.
    expect(await client.isDisabled('#hr-duel-mode')).toBe(true);
    await host.selectOption('#hr-duel-mode', 'lockstep');
    for (const page of [host, client]) await until(page, () => window.hostrelayDuel!.mode() === 'lockstep', null);
    expect(await client.inputValue('#hr-duel-mode')).toBe('lockstep');
    const rollbacks = await client.evaluate(() => window.hostrelayDuel!.stats().rollbacks);
    await inStep(host, client, 180);
    expect(await client.evaluate(() => window.hostrelayDuel!.stats().rollbacks)).toBe(rollbacks); // nothing rolls back in lockstep
    // A desync on the client only: the host finds it, sends its state, and the client plays on from it.
    await client.evaluate(() => window.hostrelayDuel!.forceDesync());
    await until(host, () => window.hostrelayDuel!.stats().healed >= 1, null, 30_000);
    await until(client, () => window.hostrelayDuel!.stats().healed >= 1, null, 30_000);
    await inStep(host, client, 60);
    expect(await host.evaluate(() => window.hostrelayDuel!.desyncs().length)).toBe(1);
    const healMs = await host.evaluate(() => window.hostrelayDuel!.stats().lastHealMs);
    await host.selectOption('#hr-duel-mode', 'rollback');
    for (const page of [host, client]) await until(page, () => window.hostrelayDuel!.mode() === 'rollback', null);
    await inStep(host, client, 180);
    await until(client, () => window.hostrelayDuel!.stats().rollbacks > 0, null);
    for (const page of [host, client]) expect(await page.evaluate(() => window.hostrelayDuel!.phase())).toBe('running');
    await until(client, () => /mode switches 2/.test(document.querySelector('.hr-duel-netgraph pre')?.textContent ?? ''), null);
    await until(host, () => /healed 1 \(last \d+ ms\)/.test(document.querySelector('.hr-duel-netgraph pre')?.textContent ?? ''), null);
    const s = await client.evaluate(() => window.hostrelayDuel!.stats());
    console.log(`duel mode switch: client resyncs ${s.resyncs} (2 switches + 1 heal), desync healed in ${healMs.toFixed(0)} ms on the host, RTT ${s.rttMs.toFixed(0)} ms\n  ${said.join('\n  ')}`);
    expect(s.resyncs).toBeGreaterThanOrEqual(3); // more if the client stalled past its timeout and resumed
    await shoot([
      ['duel-switched-host', host],
      ['duel-switched-client', client],
    ]);
    expect(errors.filter((e) => !/diverged from the host/.test(e))).toEqual([]);
  });

  it('resumes a tab cut off past the stall timeout, and seats a third page in the seat a leaver emptied, in step with the host', async () => {
    const { host, client, errors } = await startDuel('Duel (lockstep)', false);
    for (const page of [host, client]) await page.check('#hr-duel-autopilot');
    await inStep(host, client, 60);
    // Every game packet lost both ways for longer than the 3 s stall timeout.
    await client.evaluate(() => window.hostrelayDuel!.setConditions({ loss: 1 }));
    await until(client, () => window.hostrelayDuel!.phase() === 'failed', null, 30_000);
    await client.evaluate(() => window.hostrelayDuel!.setConditions({ loss: 0 }));
    await until(client, () => window.hostrelayDuel!.phase() === 'running' && window.hostrelayDuel!.stats().resyncs >= 1, null, 30_000);
    await inStep(host, client, 120);
    expect(await client.evaluate(() => window.hostrelayDuel!.slot())).toBe(1);

    // The client leaves; its seat empties at one frame on the host.
    await client.close();
    await until(host, () => window.hostrelayDuel!.roster()[1] === false, null, 30_000);
    const third = await h.player('third', { name: 'Linus' });
    third.on('pageerror', (e) => errors.push(`third: ${e.message}`));
    const code = await host.evaluate(() => window.hostrelay.roomCode ?? '');
    const joinedAt = Date.now();
    await joinByLink(third, h.base, code);
    await until(third, () => (window.hostrelayDuel?.slot() ?? -1) === 1 && window.hostrelayDuel!.stats().confirmedFrame > 0, null, 30_000);
    console.log(`duel late join: the third page's first confirmed frame ${Date.now() - joinedAt} ms after its share link opened (lobby join, WebRTC, state)`);
    await third.check('#hr-duel-autopilot');
    expect(await third.evaluate(() => window.hostrelayDuel!.mode())).toBe('lockstep');
    await until(host, () => window.hostrelayDuel!.roster()[1] === true, null);
    await inStep(host, third, 180);
    expect(await third.evaluate(() => window.hostrelayDuel!.stats().resyncs)).toBe(1);
    for (const page of [host, third]) expect(await page.evaluate(() => window.hostrelayDuel!.desyncs())).toEqual([]);
    await shoot([
      ['duel-late-join-host', host],
      ['duel-late-join-third', third],
    ]);
    expect(errors).toEqual([]);
  });
});
