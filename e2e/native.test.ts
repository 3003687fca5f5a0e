import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { botBinary, startBot, type RunningBot } from './bot';
import { launchBrowser } from './browser';
import { stateOf, waitForState } from './page-state';
import { serverBinary, startServer, type RunningServer } from './server';

// Native clients and browsers in the same rooms: hostrelay-bot (the Go client
// SDK) joins a room a Chromium tab hosts, and a tab joins a room the bot
// hosts. Both ways the pair must be relay/relay and packets must flow.

const PACKETS = 50;

let server: RunningServer;
let browser: Browser;
const contexts: BrowserContext[] = [];
const bots: RunningBot[] = [];
const pages: { name: string; page: Page }[] = [];

beforeAll(async () => {
  server = await startServer(serverBinary());
  browser = await launchBrowser();
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state !== 'fail') return;
  mkdirSync('test-results', { recursive: true });
  for (const { name, page } of pages) {
    if (!page.isClosed()) await page.screenshot({ path: `test-results/native-${name}.png`, fullPage: true }).catch(() => undefined);
  }
  for (const b of bots) process.stderr.write(`--- bot events ${JSON.stringify(b.events)}\n${b.stderr.join('\n')}\n`);
  process.stderr.write(`--- server log (last 40 lines)\n${server.logs.slice(-40).join('\n')}\n`);
});

afterAll(async () => {
  for (const b of bots) await b.stop();
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
});

async function openTab(name: string): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  pages.push({ name, page });
  return page;
}

function bot(args: string[]): RunningBot {
  const b = startBot(botBinary(), ['-url', `ws://${server.http}/ws`, '-timeout', '60s', ...args]);
  bots.push(b);
  return b;
}

describe('native clients', () => {
  it('a Go client joins a room hosted by a browser tab', async () => {
    const host = await openTab('browser-host');
    await host.goto(`http://${server.http}/`);
    await waitForState(host, () => window.hostrelay.phase === 'lobby', null);
    await host.fill('#create-name', 'Tab');
    await host.fill('#room-name', 'native e2e');
    await host.selectOption('#room-mode', 'Pointer demo');
    await host.click('#create-button');
    await waitForState(host, () => window.hostrelay.phase === 'room' && window.hostrelay.role === 'host', null);
    const code = (await stateOf(host)).roomCode ?? '';

    const b = bot(['-name', 'GoBot', '-join', code, '-send', String(PACKETS), '-expect', String(PACKETS)]);
    const open = await b.next('peer_open');
    expect(open).toMatchObject({ local: 'relay', remote: 'relay' });
    await waitForState(host, () => window.hostrelay.openPeers.length === 1, null);
    expect(await host.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);
    await waitForState(host, () => window.hostrelay.players.some((p) => p.name === 'GoBot'), null);

    // Bot → tab: the bot sends its test packets as soon as the channels open.
    await waitForState(host, (n) => window.hostrelayTest.receivedCount() >= n, PACKETS);
    // Tab → bot: the bot exits 0 once it has them all.
    expect(await host.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
    const summary = await b.next('summary');
    expect(summary['received']).toBe(PACKETS);
    expect(await b.exited).toBe(0);
    await waitForState(host, () => window.hostrelay.players.length === 1, null);
  });

  it('a browser tab joins a room hosted by a Go client', async () => {
    const b = bot(['-name', 'GoHost', '-host', '-send', String(PACKETS), '-expect', String(PACKETS)]);
    const room = await b.next('room');
    expect(room['link']).toBe(`http://${server.http}/r/${String(room['code'])}`);

    const tab = await openTab('browser-client');
    await tab.goto(String(room['link']));
    await waitForState(tab, () => window.hostrelay.phase === 'name', null);
    await tab.fill('#join-name', 'Tab');
    await tab.click('#join-button');
    await waitForState(tab, () => window.hostrelay.phase === 'room' && window.hostrelay.role === 'client', null);
    await waitForState(tab, () => window.hostrelay.players.some((p) => p.name === 'GoHost' && p.host), null);

    expect(await b.next('peer_open')).toMatchObject({ local: 'relay', remote: 'relay' });
    await waitForState(tab, () => window.hostrelay.openPeers.length === 1, null);
    expect(await tab.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);

    await waitForState(tab, (n) => window.hostrelayTest.receivedCount() >= n, PACKETS);
    expect(await tab.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
    expect((await b.next('summary'))['received']).toBe(PACKETS);
    expect(await b.exited).toBe(0);
    // The host (the bot) is gone: the tab leaves the room view.
    await tab.waitForFunction(() => window.hostrelay.phase !== 'room', undefined, { timeout: 15_000 });
  });
});
