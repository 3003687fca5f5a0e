import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { PeerIceState } from '@hostrelay/sdk';
import { botBinary, startBot } from './bot';
import { hostRoom, joinByLink, until, useHarness } from './harness';
import { waitForState } from './page-state';

// TURN credentials that expire during a game. The server issues them for
// 10 s (its shortest -turn-ttl) and pushes fresh ones at three quarters of
// that; the SDK applies them with setConfiguration and an ICE restart, and
// the pointer demo's stream must flow across the restart and past the
// expiry of the credentials the tabs joined with.

const TTL_S = 10;
const h = useHarness('ice-refresh', { serverArgs: ['-turn-ttl', `${TTL_S}s`] });

const received = (p: Page): Promise<number> => p.evaluate(() => window.hostrelay.packetsReceived);

/** Waits until the page's only peer has restarted ICE onto a ufrag other than `old`, and uses it. */
async function restartedFrom(page: Page, old: string): Promise<PeerIceState> {
  await until(
    page,
    (prev) => {
      const w = window as unknown as { iceNow?: string };
      void window.hostrelayTest.iceStates().then((s) => (w.iceNow = JSON.stringify(s)));
      const [s] = JSON.parse(w.iceNow ?? '[]') as { restarts: number; ufrag: string; selectedUfrag: string }[];
      return !!s && s.restarts >= 1 && s.selectedUfrag === s.ufrag && s.ufrag !== prev;
    },
    old,
    15_000,
  );
  const [s] = await page.evaluate(() => window.hostrelayTest.iceStates());
  return s!;
}

describe('credential refresh', () => {
  it('applies fresh credentials with an ICE restart, keeps the stream flowing, and later peers connect on them', async () => {
    const ada = await h.player('ada', { name: 'Ada' });
    const code = await hostRoom(ada, h.base, { name: 'Refresh' });
    const createdAt = Date.now();
    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    await bob.click('#ready-button');
    await until(ada, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
    await ada.click('#start-button');
    // The pointer demo: Bob sends his pointer 30 times a second, Ada echoes each packet.
    for (const p of [ada, bob]) await waitForState(p, () => window.hostrelay.openPeers.length === 1 && window.hostrelay.packetsReceived > 10, null);
    const [before] = await bob.evaluate(() => window.hostrelayTest.iceStates());
    const [hostBefore] = await ada.evaluate(() => window.hostrelayTest.iceStates());
    expect(before?.restarts).toBe(0);
    expect(before?.ufrag).toMatch(/\S{4,}/);
    expect(before?.selectedUfrag).toBe(before?.ufrag);

    // Both sessions get a refresh 7.5 s after entering the room; Bob, the offerer, restarts ICE.
    for (const p of [ada, bob]) await waitForState(p, () => window.hostrelayTest.iceRefreshes() >= 1, null, 20_000);
    const after = await restartedFrom(bob, before?.ufrag ?? '');
    // Ada answered the restart on the same connection and her end moved to the new ICE session too.
    await restartedFrom(ada, hostBefore?.ufrag ?? '');
    const refreshes = await Promise.all([ada, bob].map((p) => p.evaluate(() => window.hostrelayTest.iceRefreshes())));
    console.log(
      `refreshes applied: host ${refreshes[0]}, client ${refreshes[1]}; client ICE restarts ${after?.restarts} ` +
        `(ufrag ${before?.ufrag} → ${after?.ufrag}, pair in use on ${after?.selectedUfrag}), ` +
        `restart done ${((Date.now() - createdAt) / 1000).toFixed(1)} s after the room was created`,
    );

    // The stream keeps flowing on the restarted connection, also once the
    // credentials both tabs joined with have expired.
    const [a0, b0] = [await received(ada), await received(bob)];
    await until(ada, (n) => window.hostrelay.packetsReceived > n + 60, a0);
    await until(bob, (n) => window.hostrelay.packetsReceived > n + 60, b0);
    const expired = createdAt + TTL_S * 1000 + 2000; // Bob joined after Ada: give his a moment more
    await until(ada, (at) => Date.now() > at, expired, 20_000);
    const [a1, b1] = [await received(ada), await received(bob)];
    await until(ada, (n) => window.hostrelay.packetsReceived > n + 30, a1);
    await until(bob, (n) => window.hostrelay.packetsReceived > n + 30, b1);
    // Never a new connection: the channels stayed up through the restart.
    for (const p of [ada, bob]) {
      expect(await p.evaluate(() => window.hostrelayTest.peerOpens())).toBe(1);
      expect(await p.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);
    }

    // A player who joins now connects to Ada through allocations made with
    // her refreshed credentials: the ones she created the room with are past
    // their expiry, and the TURN server refuses those for a new allocation.
    const cal = await h.player('cal', { name: 'Cal' });
    await joinByLink(cal, h.base, code);
    await waitForState(cal, () => window.hostrelay.openPeers.length === 1, null);
    await waitForState(ada, () => window.hostrelay.openPeers.length === 2, null);
    expect(await cal.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);
    for (const p of [ada, bob, cal]) expect(await p.evaluate(() => window.hostrelay.error)).toBeNull();
  });

  it('a Go host answers the restart on the same connection: the tab keeps its channels', async () => {
    // The bot hosts, sends 50 test packets once the channel opens, and exits 0 after receiving 100:
    // 50 before the refresh and 50 after the restart, past the expiry of the credentials it started with.
    const PACKETS = 50;
    const bot = startBot(botBinary(), ['-url', `ws://${h.server.http}/ws`, '-timeout', '60s', '-name', 'GoHost', '-host', '-send', String(PACKETS), '-expect', String(2 * PACKETS)]);
    try {
      const room = await bot.next('room');
      const createdAt = Date.now();
      const tab = await h.player('tab', { name: 'Tab' });
      await joinByLink(tab, h.base, String(room['code']));
      await waitForState(tab, () => window.hostrelay.openPeers.length === 1, null);
      await waitForState(tab, (n) => window.hostrelayTest.receivedCount() >= n, PACKETS);
      expect(await tab.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
      const [before] = await tab.evaluate(() => window.hostrelayTest.iceStates());

      await waitForState(tab, () => window.hostrelayTest.iceRefreshes() >= 1, null, 20_000);
      const after = await restartedFrom(tab, before?.ufrag ?? '');
      await until(tab, (at) => Date.now() > at, createdAt + TTL_S * 1000 + 1000, 20_000);
      // Still the first connection (checked now: once the bot has its packets it leaves, and the room ends).
      expect(await tab.evaluate(() => window.hostrelayTest.peerOpens())).toBe(1);
      expect(await tab.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);
      expect(await tab.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
      expect((await bot.next('summary'))['received']).toBe(2 * PACKETS);
      expect(await bot.exited).toBe(0);
      console.log(`Go host: ICE restart answered in place (ufrag ${before?.ufrag} → ${after.ufrag}); ${2 * PACKETS} packets across it`);

      // The bot saw one connection too (it closes its peer only as it exits, after the summary).
      const beforeSummary = bot.events.slice(0, bot.events.findIndex((e) => e.event === 'summary'));
      expect(beforeSummary.filter((e) => e.event === 'peer_open')).toHaveLength(1);
      expect(beforeSummary.filter((e) => e.event === 'peer_closed')).toEqual([]);
    } finally {
      await bot.stop();
    }
  });
});
