import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useExampleSite } from './example-site';
import { until } from './harness';

// The script-tag example (examples/script-tag/index.html): one HTML file, no
// build, the SDK imported from the relay at /sdk/latest/hostrelay.mjs. It is
// served as is from a static server of its own, another origin than the
// relay's, which lets it in with -allowed-origins. Two tabs play: created in
// one, joined by the share link in the other, each moves its dot by
// keyboard and sees the other's move, through TURN (relay/relay).

const DIR = fileURLToPath(new URL('../examples/script-tag', import.meta.url));
const SHOTS = 'test-results/example-script-tag';

/** What the page draws, published for this test (window.dots). */
interface DotsState {
  role: 'host' | 'client';
  slot: number | null;
  dots: Record<string, { x: number; y: number }>;
  frames: number;
}

interface PairTypes {
  peerId: string;
  local: string;
  remote: string;
}

declare global {
  interface Window {
    dots?: DotsState;
    dotsPairs?: () => Promise<PairTypes[]>;
    HostRelay?: { VERSION: string; LobbyClient: unknown; NetHost: unknown };
  }
}

const site = useExampleSite(DIR, { shots: SHOTS, state: (page) => page.evaluate(() => window.dots ?? null) });

async function open(label: string): Promise<{ page: Page; sdk: { url: string; status: number }[] }> {
  const page = await site.open(label, { viewport: { width: 800, height: 720 } });
  const sdk: { url: string; status: number }[] = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname.startsWith('/sdk/')) sdk.push({ url: r.url(), status: r.status() });
  });
  return { page, sdk };
}

const state = (page: Page): Promise<DotsState> => page.evaluate(() => window.dots!);

/** Where `page` draws the dot of `slot`. */
async function dot(page: Page, slot: number): Promise<{ x: number; y: number }> {
  const d = (await state(page)).dots[slot];
  if (!d) throw new Error(`no dot ${slot} drawn`);
  return d;
}

async function startAs(page: Page, name: string): Promise<void> {
  await until(page, () => !(document.getElementById('start') as HTMLFormElement).hidden, null, 30_000);
  await page.fill('#name', name);
  await page.click('#go');
}

describe('the script-tag example (examples/script-tag)', () => {
  it('plays in two tabs on its own origin: the SDK from the relay, joined by the share link, each sees the other move', async () => {
    const relayUrl = `http://${site.relay.http}`;
    const { page: host, sdk } = await open('host');
    await host.goto(`${site.origin}/?relay=${encodeURIComponent(relayUrl)}`);
    await startAs(host, 'Ada');
    await until(host, () => window.dots?.role === 'host' && window.dots.dots[0] !== undefined, null, 30_000);
    const link = await host.inputValue('#link');
    expect(link).toMatch(new RegExp(`^${site.origin}/\\?room=[A-Z0-9]{7}&relay=`));
    // The module came from the relay: /sdk/latest/ redirected to the version it serves.
    expect(sdk.map((r) => [new URL(r.url).pathname, r.status])).toEqual([
      ['/sdk/latest/hostrelay.mjs', 302],
      [expect.stringMatching(/^\/sdk\/\d+\.\d+\.\d+\/hostrelay\.mjs$/), 200],
    ]);

    const { page: client } = await open('client');
    await client.goto(link);
    await until(client, () => document.getElementById('go')!.textContent === 'Join game', null, 30_000);
    await startAs(client, 'Grace');
    await until(client, () => window.dots?.slot === 1 && Object.keys(window.dots.dots).length === 2, null, 30_000);
    await until(host, () => Object.keys(window.dots!.dots).length === 2, null, 30_000);

    // The client's dot, moved by its keys, moves on the host's screen.
    const c0 = await dot(host, 1);
    await client.keyboard.down('ArrowLeft');
    await until(host, (x) => window.dots!.dots[1]!.x < x - 100, c0.x);
    await client.keyboard.up('ArrowLeft');
    // The host's dot, moved by its keys, moves on the client's screen.
    const h0 = await dot(client, 0);
    await host.keyboard.down('ArrowDown');
    await until(client, (y) => window.dots!.dots[0]!.y > y + 80, h0.y);
    await host.keyboard.up('ArrowDown');

    // Once both stop, both tabs draw both dots at the same place.
    const both = async (): Promise<string[]> => [JSON.stringify((await state(host)).dots), JSON.stringify((await state(client)).dots)];
    await expect.poll(async () => new Set(await both()).size, { timeout: 10_000 }).toBe(1);

    // Through TURN on both ends, never peer to peer.
    for (const page of [host, client]) {
      const pairs = await page.evaluate(() => window.dotsPairs!());
      expect(pairs.length).toBe(1);
      expect(pairs.map((p) => [p.local, p.remote])).toEqual([['relay', 'relay']]);
    }
    expect(await host.textContent('#status')).toBe('Arrow keys or WASD to move your dot.');
    await host.screenshot({ path: `${SHOTS}/host.png` });
    await client.screenshot({ path: `${SHOTS}/client.png` });
  });

  it('loads the classic script with the integrity the relay publishes, and refuses other bytes', async () => {
    const relayUrl = `http://${site.relay.http}`;
    const manifest = (await (await fetch(`${relayUrl}/sdk/manifest.json`)).json()) as {
      version: string;
      files: Record<string, { path: string; integrity: string }>;
    };
    const js = manifest.files['hostrelay.js']!;
    const { page } = await open('classic');
    await page.goto(`${site.origin}/?relay=${encodeURIComponent(relayUrl)}`);
    const load = (src: string, integrity: string): Promise<string> =>
      page.evaluate(
        ([s, i]) =>
          new Promise<string>((done) => {
            const el = document.createElement('script');
            Object.assign(el, { src: s, integrity: i, crossOrigin: 'anonymous' });
            el.onload = () => done('loaded');
            el.onerror = () => done('refused');
            document.head.append(el);
          }),
        [src, integrity] as const,
      );
    const wrong = manifest.files['hostrelay.mjs']!.integrity;
    expect(await load(relayUrl + js.path, wrong)).toBe('refused');
    expect(await page.evaluate(() => typeof window.HostRelay)).toBe('undefined');
    expect(await load(relayUrl + js.path, js.integrity)).toBe('loaded');
    expect(await page.evaluate(() => [window.HostRelay!.VERSION, typeof window.HostRelay!.LobbyClient, typeof window.HostRelay!.NetHost])).toEqual([
      manifest.version,
      'function',
      'function',
    ]);
  });
});
