import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './browser';
import { marksOf, stateOf, waitForState } from './page-state';
import { serverBinary, startServer, type RunningServer } from './server';

// The core journey through the real binary and real Chromium: a host tab
// creates a room, a second tab opens the share link, both connect over
// relay-only data channels through the embedded TURN, trade 100 game packets
// each way, and the host sees the player leave when the tab closes.

const PACKETS = 100;

let server: RunningServer;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pages: { name: string; page: Page; console: string[] }[] = [];

async function openPlayer(name: string): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  const log: string[] = [];
  page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  pages.push({ name, page, console: log });
  return page;
}

beforeAll(async () => {
  server = await startServer(serverBinary());
  browser = await launchBrowser();
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state !== 'fail') return;
  mkdirSync('test-results', { recursive: true });
  for (const { name, page, console } of pages) {
    if (page.isClosed()) continue;
    await page.screenshot({ path: `test-results/core-${name}.png`, fullPage: true }).catch(() => undefined);
    const state = await stateOf(page).catch(() => null);
    process.stderr.write(`--- ${name}: state ${JSON.stringify(state)}\n${console.join('\n')}\n`);
  }
  process.stderr.write(`--- server log (last 60 lines)\n${server.logs.slice(-60).join('\n')}\n`);
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
});

describe('share link to relay data channel', () => {
  it('hosts, joins, exchanges packets over relay/relay and sees the player leave', async () => {
    const base = `http://${server.http}`;

    // Tab A hosts.
    const host = await openPlayer('host');
    await host.goto(`${base}/`);
    await waitForState(host, () => window.hostrelay.phase === 'lobby', null);
    await host.fill('#create-name', 'Ada');
    await host.fill('#room-name', 'e2e room');
    await host.selectOption('#room-mode', 'Pointer demo');
    await host.fill('#max-players', '4');
    await host.click('#create-button');
    await waitForState(host, () => window.hostrelay.phase === 'room' && window.hostrelay.role === 'host', null);
    const code = (await stateOf(host)).roomCode ?? '';
    const link = await host.inputValue('#share-link');
    expect(link).toBe(`${base}/r/${code}`);

    // Tab B opens the share link, which asks only for a name.
    const client = await openPlayer('client');
    await client.goto(link);
    await waitForState(client, () => window.hostrelay.phase === 'name', null);
    await client.fill('#join-name', 'Grace');
    await client.click('#join-button');
    await waitForState(client, () => window.hostrelay.phase === 'room' && window.hostrelay.role === 'client', null);

    // Both see both, the host marked.
    const bothListed = (): boolean => {
      const ps = window.hostrelay.players;
      return ps.length === 2 && ps.some((p) => p.name === 'Ada' && p.host) && ps.some((p) => p.name === 'Grace' && !p.host);
    };
    await waitForState(host, bothListed, null);
    await waitForState(client, bothListed, null);
    expect(await host.locator('#players li').count()).toBe(2);

    // The data channels open on both ends, through our TURN on both ends.
    await waitForState(host, () => window.hostrelay.openPeers.length === 1, null);
    await waitForState(client, () => window.hostrelay.openPeers.length === 1, null);
    for (const page of [host, client]) {
      const pairs = await page.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes());
      expect(pairs).toEqual([{ local: 'relay', remote: 'relay' }]);
    }

    // 100 numbered packets each way on the unreliable channel; on loopback none should be lost.
    expect(await host.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
    expect(await client.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
    await waitForState(client, (n) => window.hostrelayTest.receivedCount() >= n, PACKETS);
    await waitForState(host, (n) => window.hostrelayTest.receivedCount() >= n, PACKETS);
    expect(await client.evaluate(() => window.hostrelayTest.receivedCount())).toBe(PACKETS);
    expect(await host.evaluate(() => window.hostrelayTest.receivedCount())).toBe(PACKETS);

    // The client gets ready and the host starts the game: the pointer demo mounts on both.
    await client.click('#ready-button');
    await waitForState(host, () => window.hostrelay.players.every((p) => p.host || p.ready), null);
    await host.click('#start-button');
    await waitForState(host, () => window.hostrelay.started, null);
    await waitForState(client, () => window.hostrelay.started, null);

    // Pointer packets round-trip through the host; wait for 50 echoes.
    const canvas = await client.locator('#demo-canvas').boundingBox();
    if (canvas) {
      await client.mouse.move(canvas.x + canvas.width / 3, canvas.y + canvas.height / 2, { steps: 5 });
    }
    await waitForState(client, (n) => window.hostrelay.rttMs !== null && window.hostrelay.packetsReceived >= n + 50, PACKETS);
    const marks = await marksOf(client);
    const rtt = (await stateOf(client)).rttMs ?? NaN;
    const open = marks.channelOpen ?? NaN;
    console.log(
      `share link opened → channel open: ${open.toFixed(0)} ms ` +
        `(join clicked → open: ${(open - (marks.joinStart ?? NaN)).toFixed(0)} ms); ` +
        `median pointer RTT: ${rtt.toFixed(2)} ms`,
    );
    expect(rtt).toBeGreaterThan(0);

    // Nothing moves, so neither tab redraws its canvas (pointers still go
    // 30 times a second and come back unchanged); a move redraws both.
    const countDraws = (): void => {
      const w = window as Window & { __draws?: number };
      w.__draws = 0;
      const clear = CanvasRenderingContext2D.prototype.clearRect;
      CanvasRenderingContext2D.prototype.clearRect = function (this: CanvasRenderingContext2D, ...args: Parameters<typeof clear>) {
        w.__draws = (w.__draws ?? 0) + 1;
        clear.apply(this, args);
      };
    };
    const draws = (page: Page): Promise<number> => page.evaluate(() => (window as Window & { __draws?: number }).__draws ?? -1);
    await host.evaluate(countDraws);
    await client.evaluate(countDraws);
    const before = await stateOf(client);
    await client.waitForTimeout(500);
    expect((await stateOf(client)).packetsReceived, 'echoes kept coming while still').toBeGreaterThan(before.packetsReceived);
    expect(await draws(host), 'host redrew a still canvas').toBe(0);
    expect(await draws(client), 'client redrew a still canvas').toBe(0);
    if (canvas) await client.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 3, { steps: 3 });
    await waitForState(host, () => ((window as Window & { __draws?: number }).__draws ?? 0) > 0, null);
    await waitForState(client, () => ((window as Window & { __draws?: number }).__draws ?? 0) > 0, null);

    // Tab B goes away; the host sees it leave.
    await client.close();
    await waitForState(host, () => window.hostrelay.players.length === 1 && window.hostrelay.openPeers.length === 0, null);
    expect(await host.locator('#players li').count()).toBe(1);
  });
});
