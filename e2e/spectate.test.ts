import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { collectErrors, startArena, until, useHarness } from './harness';

// Spectators in real Chromium tabs: two tabs play the arena over TURN, a
// third watches it from the room list's Watch button and a fourth from a
// ?watch link. Neither has a seat; both see the ball move, drawn from the
// host's spectator stream the server holds for its delay (2 s by default),
// so what they see is never newer than the host's world 2 s ago.

const h = useHarness('spectate');

/** The server's default spectator delay, in arena ticks (60 a second). */
const DELAY_TICKS = 120;
/**
 * The least a spectator's newest keyframe may be behind the host's tick,
 * read after it: the delay less a sixth for the host's ticks running late
 * in a busy browser (the tick clock catches up in bursts).
 */
const MIN_BEHIND = DELAY_TICKS * (5 / 6);

describe('spectators', () => {
  it('watch a full, started arena from the room list and from a link, the delay behind the host', async () => {
    const { host, client, code, errors } = await startArena(h, 'Final', 2);
    for (const page of [host, client]) await page.check('#hr-autopilot');

    // The room is full and started: its row has no seat but a Watch button.
    const fan = await h.player('fan');
    collectErrors(fan, errors, 'fan');
    await fan.goto(`${h.base}/`);
    await until(fan, () => window.hostrelay?.connection === 'online' && window.hostrelay.rooms.some((r) => r.started), null);
    await fan.click(`button[data-watch="${code}"]`);
    await until(fan, () => window.hostrelay.phase === 'watch' && (window.hostrelayWatch?.frames() ?? 0) > 0, null, 10_000);
    // Joining mid-game, the first picture is the server's last released
    // keyframe: within a second of the delay (the host sends one every 100 ms).
    const first = await fan.evaluate(() => window.hostrelayWatch!.latestTick()!);
    const firstBehind = (await host.evaluate(() => window.hostrelayGame!.tick())) - first;
    expect(firstBehind).toBeLessThanOrEqual(DELAY_TICKS + 60);
    expect(fan.url()).toBe(`${h.base}/?watch=${code}`);
    await until(fan, () => document.getElementById('watch-status')?.textContent === 'Watching · 2 s behind', null);
    // A spectator is not a player: the room still has its two.
    expect((await host.evaluate(() => window.hostrelay.players)).map((p) => p.name)).toEqual(['Ada', 'Grace']);

    const linked = await h.player('linked');
    collectErrors(linked, errors, 'linked');
    await linked.goto(`${h.base}/r/${code}?watch`);
    await until(linked, () => (window.hostrelayWatch?.frames() ?? 0) > 0, null, 10_000);

    // Three seconds of watching: the ball moves on both spectators, and each
    // keyframe they have is at least the delay older than the host's world.
    const balls = new Set<string>();
    let least = Infinity;
    const end = (await host.evaluate(() => window.hostrelayGame!.tick())) + 180;
    for (;;) {
      for (const watcher of [fan, linked]) {
        const seen = await watcher.evaluate(() => ({ tick: window.hostrelayWatch!.latestTick(), ball: window.hostrelayWatch!.ball() }));
        const now = await host.evaluate(() => window.hostrelayGame!.tick());
        expect(seen.tick).not.toBeNull();
        least = Math.min(least, now - seen.tick!);
        if (watcher === fan && seen.ball) balls.add(`${seen.ball.x.toFixed(1)},${seen.ball.y.toFixed(1)}`);
      }
      if ((await host.evaluate(() => window.hostrelayGame!.tick())) >= end) break;
      await fan.waitForTimeout(100); // a sampling interval, not a wait for a condition
    }
    const frames = await fan.evaluate(() => window.hostrelayWatch!.frames());
    console.log(`spectators: first picture ${firstBehind} ticks behind the host; ${frames} keyframes, ${balls.size} ball positions seen, newest keyframe at least ${least} ticks behind the host (delay ${DELAY_TICKS})`);
    expect(balls.size).toBeGreaterThan(5);
    expect(least).toBeGreaterThanOrEqual(MIN_BEHIND);

    mkdirSync('test-results', { recursive: true });
    await fan.screenshot({ path: 'test-results/spectate-fan.png' });
    await host.screenshot({ path: 'test-results/spectate-host.png' });

    // The host leaves a room made with migrate: Grace hosts now, and her tab
    // publishes the stream, so the spectators go on watching.
    const before = await fan.evaluate(() => window.hostrelayWatch!.frames());
    await host.close();
    await until(client, () => window.hostrelayGame?.promoted() ?? false, null, 15_000);
    await until(fan, (n) => window.hostrelayWatch!.frames() >= n, before + 2 * 10 + 10, 15_000);
    // Then she leaves too: the room closes and the spectators are told the game is over.
    await client.close();
    await until(fan, () => document.getElementById('watch-status')?.textContent === 'The host left: the game is over.', null, 15_000);
    expect(errors).toEqual([]);
  });
});
