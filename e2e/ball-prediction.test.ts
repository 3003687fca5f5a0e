import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startArena, until, useHarness } from './harness';

// The arena's ball predicted on the client (issue 29), in two real Chromium
// tabs through the real server and its TURN relay, with the client's
// conditioner at 100 ms each way and 10 % loss each way (≈ 200 ms round
// trip). The client's player walks into a resting ball: the ball must move
// on the client's screen in the frame the push happens, not a round trip
// plus the interpolation delay (≈ 300 ms, 18 frames) later. Then both tabs
// play so the host's player pushes the ball too, and the client's netgraph
// shows the ball's corrections.

const h = useHarness('ball-prediction');

const PLAYER_R = 18;
const BALL_R = 11;
/** The ball is put this far to the left of the client's player: 11 px from touching it. */
const GAP = 40;

describe('the arena ball, predicted', () => {
  it('moves on the client in the frame its player pushes it, over TURN at 100 ms and 10 % loss', async () => {
    const { host, client, errors } = await startArena(h, 'Ball');
    await client.evaluate(() => window.hostrelayGame!.setConditions({ latencyMs: 100, loss: 0.1 }));

    // The ball at rest GAP px to the left of the client's player, and the client drawing it there, predicted.
    const slot = await client.evaluate(() => window.hostrelayGame!.localId());
    expect(slot).not.toBeNull();
    const me = await host.evaluate((s) => window.hostrelayGame!.entities().find(([id]) => id === s)![1], slot!);
    const spot = { x: me.x - GAP, y: me.y };
    expect(await host.evaluate(([x, y]) => window.hostrelayGame!.placeBall(x!, y!, 0, 0), [spot.x, spot.y])).toBe(true);
    await until(
      client,
      (arg) => {
        const [x, y] = JSON.parse(arg) as [number, number];
        const f = window.hostrelayGame!.frames().slice(-30);
        return f.length === 30 && f.every((s) => s[3] === x && s[4] === y && s[5] === 1);
      },
      JSON.stringify([spot.x, spot.y]),
      15_000,
    );

    // Walk left into it.
    const pressedAt = await client.evaluate(() => performance.now());
    await client.keyboard.down('ArrowLeft');
    await until(
      client,
      (arg) => {
        const [x, y, since] = JSON.parse(arg) as [number, number, number];
        return window.hostrelayGame!.frames().some((s) => s[0] > since && (s[3] !== x || s[4] !== y));
      },
      JSON.stringify([spot.x, spot.y, pressedAt]),
      10_000,
    );
    await client.keyboard.up('ArrowLeft');
    const frames = (await client.evaluate(() => window.hostrelayGame!.frames())).filter((f) => f[0] > pressedAt);
    const moved = frames.findIndex((f) => f[3] !== spot.x || f[4] !== spot.y);
    const touching = frames.findIndex((f) => Math.hypot(f[3] - f[1], f[4] - f[2]) <= PLAYER_R + BALL_R + 1);
    const walked = frames.findIndex((f) => f[1] !== frames[0]![1]);
    const stats = await client.evaluate(() => window.hostrelayGame!.clientStats()!);
    console.log(
      `after the key: our player moved at frame ${walked}, drawn touching the ball at frame ${touching}, ` +
        `the ball moved at frame ${moved} (${(frames[moved]![0] - frames[touching]![0]).toFixed(0)} ms from the touch); ` +
        `RTT ${stats.rttMs?.toFixed(0)} ms, interp ${stats.interpDelayMs.toFixed(0)} ms`,
    );
    expect(walked).toBeGreaterThanOrEqual(0);
    expect(touching).toBeGreaterThan(walked);
    // The frame of the push: the drawn player is blended between two ticks,
    // so the ball (moved by the tick in which they touch) may go one frame
    // before the blend shows them touching, never after.
    expect(moved).toBeGreaterThanOrEqual(touching - 1);
    expect(moved).toBeLessThanOrEqual(touching);
    expect(frames[moved]![5]).toBe(1);
    expect(stats.rttMs!).toBeGreaterThan(150); // the conditioner really delayed the round trip

    // Both tabs play: the host's player pushes the ball too, seen by the client
    // in the past, so the client's ball is corrected; the netgraph counts it.
    for (const page of [host, client]) await page.evaluate(() => window.hostrelayGame!.setAutopilot(true));
    await until(client, () => (window.hostrelayGame!.clientStats()?.entityCorrections ?? 0) >= 8, null, 60_000);
    await until(client, () => /ball predicted {3}corrections [1-9]/.test(document.querySelector('.hr-netgraph')?.textContent ?? ''), null, 30_000);
    const after = await client.evaluate(() => window.hostrelayGame!.clientStats()!);
    console.log(
      `playing: ${after.entityCorrections} ball corrections (largest slid ${after.maxEntityCorrection.toFixed(1)} px, ` +
        `${after.entitySnaps} jumps), largest slide ${after.maxEntityVisibleCorrection.toFixed(2)} px/frame, ${after.desyncs} desyncs`,
    );
    expect(after.desyncs).toBe(0);
    const dir = process.env['HOSTRELAY_SCREENSHOTS'];
    if (dir) {
      mkdirSync(dir, { recursive: true });
      await client.screenshot({ path: `${dir}/ball-prediction-client.png` });
    }
    expect(errors).toEqual([]);
  });
});
