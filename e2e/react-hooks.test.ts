import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { build, defaultClientConditions } from 'vite';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { useExampleSite } from './example-site';
import type { PlayerProps, Shown } from './react-hooks/page';

// @hostrelay/react's hooks in Chromium against the real relay: a page of
// components on the hooks (e2e/react-hooks/page.tsx), built here with Vite
// as a development build (StrictMode runs every effect twice only there)
// and driven with React Testing Library inside the page. The relay's admin
// API counts what the hooks really opened: lobby sessions, rooms, players.

const TOKEN = 'e2e-react-admin-token-0123456789';
const execFileAsync = promisify(execFile);
let work = '';

/** The React versions the page is built with: the repository's, and 18 (the oldest the package takes). */
const REACTS = ['19', '18'] as const;
type ReactVersion = (typeof REACTS)[number];

/**
 * Builds the test page into a temporary folder, once per React version:
 * /19/ with the repository's React, /18/ with React 18 installed beside it
 * (from the npm cache or the registry) and put in place of react and
 * react-dom for everything in the bundle, React Testing Library included.
 */
async function buildPages(): Promise<string> {
  work = mkdtempSync(join(tmpdir(), 'hostrelay-react-hooks-'));
  const r18 = join(work, 'react18');
  mkdirSync(r18);
  writeFileSync(join(r18, 'package.json'), JSON.stringify({ name: 'react18', private: true }));
  await execFileAsync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', 'react@^18.3.1', 'react-dom@^18.3.1'], { cwd: r18 });
  const modules = join(r18, 'node_modules');
  for (const react of REACTS) {
    const alias =
      react === '18'
        ? ['react', 'react-dom'].flatMap((name) => [
            { find: new RegExp(`^${name}$`), replacement: join(modules, name) },
            { find: new RegExp(`^${name}/(.*)$`), replacement: `${join(modules, name)}/$1` },
          ])
        : [];
    await build({
      configFile: false,
      logLevel: 'warn',
      mode: 'development',
      root: fileURLToPath(new URL('./react-hooks', import.meta.url)),
      base: './',
      resolve: { conditions: ['@hostrelay/source', ...defaultClientConditions], alias },
      define: { 'process.env.NODE_ENV': JSON.stringify('development') },
      esbuild: { jsx: 'automatic' },
      build: { outDir: join(work, 'pages', react), emptyOutDir: true, minify: false, target: 'es2022' },
    });
  }
  return join(work, 'pages');
}

const site = useExampleSite(buildPages, {
  shots: 'test-results/react-hooks',
  state: (page) => page.evaluate(() => window.sockets),
  serverArgs: ['-admin-token', TOKEN],
});

// Every test starts from a relay with nobody on it.
beforeEach(() => eventually(async () => (await overview()).server.sessions === 0, 'the relay to have no session left'));

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Overview {
  server: { sessions: number; rooms: number; players: number };
  rooms: { code: string; host: string; players: { id: string; name: string; session: string; ready: boolean }[] }[];
}

async function overview(): Promise<Overview> {
  const res = await fetch(`http://${site.relay.http}/api/v1/admin/overview`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  if (!res.ok) throw new Error(`admin overview: ${res.status} ${await res.text()}`);
  return (await res.json()) as Overview;
}

/** A fresh browser context on the test page built with `react`; the page counts the WebSockets it opens. */
async function open(label: string, react: ReactVersion = '19'): Promise<Page> {
  const page = await site.open(label, {}, (context) =>
    context.addInitScript(() => {
      window.sockets = [];
      const Native = window.WebSocket;
      window.WebSocket = class extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          window.sockets.push(String(url));
        }
      };
    }),
  );
  await page.goto(`${site.origin}/${react}/`);
  await page.waitForFunction(() => window.hooks !== undefined);
  expect(await page.evaluate(() => window.reactVersion.split('.')[0])).toBe(react);
  return page;
}

const ws = (): string => `ws://${site.relay.http}/ws`;
const mount = (page: Page, id: string, props: PlayerProps, strict = true): Promise<void> =>
  page.evaluate(([i, p, s]) => window.hooks.mount(i, p, s), [id, props, strict] as const);
const shown = (page: Page, id: string): Promise<Shown> => page.evaluate((i) => window.hooks.shown(i), id);
const waitShown = (page: Page, id: string, testId: string, text: string): Promise<void> =>
  page.evaluate(([i, t, x]) => window.hooks.waitFor(i, t, x), [id, testId, text] as const);
const waitItem = (page: Page, id: string, testId: string, text: string): Promise<void> =>
  page.evaluate(([i, t, x]) => window.hooks.waitForItem(i, t, x), [id, testId, text] as const);

/** Creates a public room as `name` on a new page; returns the page and the room's code. */
async function host(name: string, room: string, react: ReactVersion = '19'): Promise<{ page: Page; code: string }> {
  const page = await open(name, react);
  await mount(page, 'me', { url: ws(), name, target: { name: room, maxPlayers: 4, public: true } });
  await waitShown(page, 'me', 'room', 'open');
  return { page, code: (await shown(page, 'me')).code };
}

describe.each(REACTS)('@hostrelay/react on React %s in Chromium', (react) => {
  it('opens one lobby connection and one room under StrictMode, and closes both on unmount', async () => {
    const page = await open('strict', react);
    await mount(page, 'me', { url: ws(), name: 'Ada', target: { name: 'Strict', maxPlayers: 4, public: true } });
    await waitShown(page, 'me', 'room', 'open');
    // StrictMode did run the effects twice (a development build), yet one socket and one session.
    expect(await page.evaluate(() => window.probeEffects)).toBe(2);
    expect(await page.evaluate(() => window.sockets)).toEqual([ws()]);
    const me = await shown(page, 'me');
    expect(me).toMatchObject({ lobby: 'open', host: 'Ada', players: ['Ada (you)'] });
    const o = await overview();
    expect(o.server).toMatchObject({ sessions: 1, rooms: 1, players: 1 });
    expect(o.rooms[0]!.players.map((p) => p.session)).toEqual([me.session]);

    await page.evaluate(() => window.hooks.unmount('me'));
    await eventually(async () => (await overview()).server.sessions === 0, 'the session to close after unmount');
    expect((await overview()).server.rooms).toBe(0);
    expect(await page.evaluate(() => window.sockets.length)).toBe(1);
  });

  it('leaves a room whose join was still on its way when the component unmounted', async () => {
    const ada = await host('Ada', 'Door', react);
    const grace = await open('Grace', react);
    // The lobby stays; only the room component goes, the moment its join went out.
    await mount(grace, 'lobby', { url: ws(), name: 'Grace' });
    await waitShown(grace, 'lobby', 'lobby', 'open');
    await grace.evaluate(([p]) => {
      window.hooks.rerender('lobby', p);
      window.hooks.rerender('lobby', { url: p.url, name: p.name });
    }, [{ url: ws(), name: 'Grace', target: ada.code }] as const);
    // The join did land (the host saw her) and was left: the room is Ada's alone again.
    await eventually(async () => (await overview()).rooms[0]?.players.length === 1 && (await shown(ada.page, 'me')).peak === '2', 'the join to land and be left');
    await waitShown(ada.page, 'me', 'room', 'open');
    expect((await shown(ada.page, 'me')).players).toEqual(['Ada (you)']);
    expect((await overview()).server.sessions).toBe(2);

    // The whole tree unmounted as its join went out: the lobby closes too, and no seat or session is left.
    await grace.evaluate(([p]) => window.hooks.unmountWhenJoining('gone', p), [{ url: ws(), name: 'Gone', target: ada.code }] as const);
    expect(await grace.evaluate(() => window.sockets.length)).toBe(2);
    await eventually(async () => (await overview()).server.sessions === 2, 'the unmounted lobby to close');
    expect((await overview()).rooms.map((r) => r.players.map((p) => p.name))).toEqual([['Ada']]);
    expect((await shown(ada.page, 'me')).players).toEqual(['Ada (you)']);
  });
});

describe('@hostrelay/react in Chromium', () => {
  it('lists the room, joins it by code, readies up, chats and messages the host over a data channel', async () => {
    const ada = await host('Ada', 'Party');
    const grace = await open('Grace');
    await mount(grace, 'me', { url: ws(), name: 'Grace', directory: true });
    await waitItem(grace, 'me', 'rooms', ada.code);

    await grace.evaluate(([p]) => window.hooks.rerender('me', p), [{ url: ws(), name: 'Grace', target: ada.code }] as const);
    await waitShown(grace, 'me', 'room', 'open'); // the client's data channels to the host are open
    await waitItem(ada.page, 'me', 'players', 'Grace');
    expect(await grace.evaluate(() => window.sockets.length)).toBe(1);
    expect((await shown(grace, 'me')).players).toEqual(['Ada', 'Grace (you)']);

    await grace.evaluate(() => window.hooks.ready('me'));
    await waitItem(ada.page, 'me', 'players', 'Grace ready');
    await grace.evaluate(() => window.hooks.chat('me', 'hello from React'));
    await waitItem(ada.page, 'me', 'chat', 'Grace: hello from React');
    await waitItem(grace, 'me', 'chat', 'Grace: hello from React');

    await ada.page.evaluate(() => window.hooks.ping('me'));
    await waitItem(grace, 'me', 'messages', 'Ada: ping from Ada');
    await grace.evaluate(() => window.hooks.ping('me'));
    await waitItem(ada.page, 'me', 'messages', 'Grace: ping from Grace');

    // A rename on the open connection is a setName, not a new connection.
    await grace.evaluate(([p]) => window.hooks.rerender('me', p), [{ url: ws(), name: 'Grace H', target: ada.code }] as const);
    await waitItem(ada.page, 'me', 'players', 'Grace H ready');
    expect(await grace.evaluate(() => window.sockets.length)).toBe(1);

    // Leaving the room (target null) keeps the lobby: the host sees her go.
    await grace.evaluate(([p]) => window.hooks.rerender('me', p), [{ url: ws(), name: 'Grace H' }] as const);
    await eventually(async () => (await overview()).rooms[0]?.players.length === 1, 'Grace to leave the room');
    await waitShown(ada.page, 'me', 'room', 'open');
    expect((await shown(ada.page, 'me')).players).toEqual(['Ada (you)']);
    expect((await overview()).server.sessions).toBe(2);
  });

  it('moves from one room to another: the second join waits for the first leave', async () => {
    const ada = await host('Ada', 'First');
    const bob = await host('Bob', 'Second');
    const grace = await open('Grace');
    await mount(grace, 'me', { url: ws(), name: 'Grace', target: ada.code });
    await waitShown(grace, 'me', 'room', 'open');
    await grace.evaluate(([p]) => window.hooks.rerender('me', p), [{ url: ws(), name: 'Grace', target: bob.code }] as const);
    await waitShown(grace, 'me', 'code', bob.code);
    await waitShown(grace, 'me', 'room', 'open');
    expect((await shown(grace, 'me')).error).toBe('');
    const rooms = new Map((await overview()).rooms.map((r) => [r.code, r.players.map((p) => p.name)]));
    expect(rooms.get(ada.code)).toEqual(['Ada']);
    expect(rooms.get(bob.code)).toEqual(['Bob', 'Grace']);
  });
});

/** Polls `check` every 50 ms until it holds; fails after `timeoutMs` naming `what`. */
async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
