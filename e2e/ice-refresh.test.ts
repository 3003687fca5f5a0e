import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
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
    const restarted = JSON.stringify([before?.ufrag]);
    await until(
      bob,
      (old) => {
        const w = window as unknown as { iceNow?: string };
        void window.hostrelayTest.iceStates().then((s) => (w.iceNow = JSON.stringify(s)));
        const [s] = JSON.parse(w.iceNow ?? '[]') as { restarts: number; ufrag: string; selectedUfrag: string }[];
        return !!s && s.restarts >= 1 && s.selectedUfrag === s.ufrag && !(JSON.parse(old) as string[]).includes(s.ufrag);
      },
      restarted,
      15_000,
    );
    const [after] = await bob.evaluate(() => window.hostrelayTest.iceStates());
    // Ada answered the restart on the same connection and her end moved to the new ICE session too.
    await until(
      ada,
      (old) => {
        const w = window as unknown as { iceNow?: string };
        void window.hostrelayTest.iceStates().then((s) => (w.iceNow = JSON.stringify(s)));
        const [s] = JSON.parse(w.iceNow ?? '[]') as { restarts: number; ufrag: string; selectedUfrag: string }[];
        return !!s && s.restarts >= 1 && s.selectedUfrag === s.ufrag && s.ufrag !== old;
      },
      hostBefore?.ufrag ?? '',
      15_000,
    );
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
});
