import { writeFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../e2e/browser';
import { marksOf, stateOf, waitForState } from '../../e2e/page-state';

// Share link opened → first game packet, in headless Chromium with the e2e
// flags (loopback only). One host tab creates a room and starts the game;
// each run opens the share link in a fresh context (a returning player: the
// name is already remembered, so the page joins without a click) and notes
// when the first packet arrives on the game channel. Times are the
// page's own clock, whose zero is the navigation start.
//
// Env: BENCH_URL (a running hostrelay), BENCH_OUT (JSON results), BENCH_RUNS,
// BENCH_PROFILE (a directory: each run's CPU profile of the joining page,
// from navigation to the first packet, as run-N.cpuprofile for DevTools),
// BENCH_TRACE (a file: a Chrome trace of the middle run, every process of
// the browser, for chrome://tracing or ui.perfetto.dev).

const base = process.env['BENCH_URL'] ?? '';
const out = process.env['BENCH_OUT'] ?? '';
const runs = Number(process.env['BENCH_RUNS'] ?? '10');
const traceFile = process.env['BENCH_TRACE'] ?? '';
/** How long a new context and tab are left before the link is opened. */
const SETTLE_MS = 1000;
const TRACE_CATEGORIES = ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'v8.execute', 'blink', 'blink.user_timing', 'loading', 'webrtc'];

/** What the joining page logs when its first game packet arrives. */
const FIRST_PACKET = 'bench:first-packet';

declare global {
  interface Window {
    __bench?: {
      firstPacket: number | null;
      offer: number | null;
      answer: number | null;
      relay: number | null;
      remoteRelay: number | null;
    };
    __benchHost?: { answered: HostAnswer[] };
  }
}

/** One answer of the host page: when it was set, and when its peer connection's first relay candidate came. */
interface HostAnswer {
  answer: number | null;
  relay: number | null;
}

/**
 * Records the first message on any 'game' data channel of the page, and
 * when the first offer was set, the first answer applied and the first
 * relay candidate gathered.
 */
function recordFirstPacket(): void {
  const b = { firstPacket: null, offer: null, answer: null, relay: null, remoteRelay: null } as NonNullable<Window['__bench']>;
  window.__bench = b;
  const setLocal = RTCPeerConnection.prototype.setLocalDescription as (this: RTCPeerConnection, d?: RTCLocalSessionDescriptionInit) => Promise<void>;
  RTCPeerConnection.prototype.setLocalDescription = function (this: RTCPeerConnection, d?: RTCLocalSessionDescriptionInit) {
    this.addEventListener('icecandidate', (e) => {
      if (e.candidate?.type === 'relay' && b.relay === null) b.relay = performance.now();
    });
    return setLocal.call(this, d).then(() => {
      if (b.offer === null && this.localDescription?.type === 'offer') b.offer = performance.now();
    });
  };
  const setRemote = RTCPeerConnection.prototype.setRemoteDescription as (this: RTCPeerConnection, d: RTCSessionDescriptionInit) => Promise<void>;
  RTCPeerConnection.prototype.setRemoteDescription = function (this: RTCPeerConnection, d: RTCSessionDescriptionInit) {
    return setRemote.call(this, d).then(() => {
      if (b.answer === null && d.type === 'answer') b.answer = performance.now();
    });
  };
  const addCandidate = RTCPeerConnection.prototype.addIceCandidate as (this: RTCPeerConnection, c?: RTCIceCandidateInit | null) => Promise<void>;
  RTCPeerConnection.prototype.addIceCandidate = function (this: RTCPeerConnection, c?: RTCIceCandidateInit | null) {
    // The host's first relay candidate, as the joining page hands it to ICE.
    if (b.remoteRelay === null && c?.candidate?.includes(' typ relay')) b.remoteRelay = performance.now();
    return addCandidate.call(this, c);
  };
  const create = RTCPeerConnection.prototype.createDataChannel;
  RTCPeerConnection.prototype.createDataChannel = function (this: RTCPeerConnection, label, init) {
    const ch = create.call(this, label, init);
    if (label === 'game') {
      ch.addEventListener('message', () => {
        if (window.__bench && window.__bench.firstPacket === null) {
          window.__bench.firstPacket = performance.now();
          console.debug('bench:first-packet'); // FIRST_PACKET: this function runs in the page, without the module's names
        }
      });
    }
    return ch;
  };
}

/**
 * The host page: for each peer connection that answers, when its answer was
 * set and when its first relay candidate was gathered (the joiner's ICE
 * checks wait for it). A candidate before the answer is set (a description
 * set ahead of the answer) counts as ready at once.
 */
function recordHostAnswers(): void {
  const h: NonNullable<Window['__benchHost']> = { answered: [] };
  window.__benchHost = h;
  const seen = new WeakMap<RTCPeerConnection, HostAnswer>();
  const setLocal = RTCPeerConnection.prototype.setLocalDescription as (this: RTCPeerConnection, d?: RTCLocalSessionDescriptionInit) => Promise<void>;
  RTCPeerConnection.prototype.setLocalDescription = function (this: RTCPeerConnection, d?: RTCLocalSessionDescriptionInit) {
    let entry = seen.get(this);
    if (entry === undefined && this.remoteDescription?.type === 'offer') {
      const e: HostAnswer = { answer: null, relay: null };
      entry = e;
      seen.set(this, e);
      h.answered.push(e);
      this.addEventListener('icecandidate', (ev) => {
        if (ev.candidate?.type === 'relay' && e.relay === null) e.relay = performance.now();
      });
    }
    const found = entry;
    return setLocal.call(this, d).then(() => {
      if (found && found.answer === null && this.localDescription?.type === 'answer') found.answer = performance.now();
    });
  };
}

let browser: Browser;

beforeAll(async () => {
  if (!base || !out) throw new Error('set BENCH_URL and BENCH_OUT (bench/cmd/benchrun does)');
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
}

it('share link to first game packet', async () => {
  const hostContext = await browser.newContext();
  await hostContext.addInitScript(recordHostAnswers);
  const host = await hostContext.newPage();
  await host.goto(`${base}/`);
  await waitForState(host, () => window.hostrelay.phase === 'lobby', null);
  await host.fill('#create-name', 'Host');
  await host.fill('#room-name', 'bench room');
  await host.selectOption('#room-mode', 'Pointer demo');
  await host.fill('#max-players', '16');
  await host.click('#create-button');
  await waitForState(host, () => window.hostrelay.phase === 'room' && window.hostrelay.role === 'host', null);
  const link = await host.inputValue('#share-link');

  // Start the game with a first player, so every measured player joins a
  // running game: the pointer demo mounts on join and its packets flow (the
  // client sends 30 times a second, the host echoes each one).
  const warmContext = await browser.newContext();
  await warmContext.addInitScript(() => localStorage.setItem('hostrelay.name', 'Warm'));
  const warm = await warmContext.newPage();
  await warm.goto(link);
  await waitForState(warm, () => window.hostrelay.phase === 'room' && window.hostrelay.openPeers.length === 1, null);
  await warm.click('#ready-button');
  await waitForState(host, () => window.hostrelay.players.length === 2 && window.hostrelay.players.every((p) => p.host || p.ready), null);
  await host.click('#start-button');
  await waitForState(warm, () => window.hostrelay.started, null);
  await warmContext.close();
  await waitForState(host, () => window.hostrelay.openPeers.length === 0, null);

  const total: number[] = [];
  const channel: number[] = [];
  const joinClick: number[] = [];
  const scriptStart: number[] = [];
  const domLoaded: number[] = [];
  const welcome: number[] = [];
  const joined: number[] = [];
  const offer: number[] = [];
  const relay: number[] = [];
  const answer: number[] = [];
  const remoteRelay: number[] = [];
  const hostRelayAfterAnswer: number[] = [];
  for (let i = 0; i < runs; i++) {
    const hostAnswersBefore = await host.evaluate(() => window.__benchHost?.answered.length ?? 0);
    const context = await browser.newContext();
    await context.addInitScript(() => localStorage.setItem('hostrelay.name', 'Runner'));
    await context.addInitScript(recordFirstPacket);
    const page: Page = await context.newPage();
    // The player's browser is open and idle when the link is clicked: the
    // new context's own start-up (its services, its first renderer) is left
    // to finish before the clock starts, as a browser that was already
    // running has done it long before.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const profileDir = process.env['BENCH_PROFILE'];
    const cdp = profileDir ? await context.newCDPSession(page) : null;
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    // Told by the page, not polled: waitForFunction would compile
    // Playwright's script in the joining page and run it every frame,
    // on the core the join is waiting for.
    const firstSeen = page.waitForEvent('console', { predicate: (m) => m.text() === FIRST_PACKET, timeout: 30_000 });
    const tracing = traceFile !== '' && i === Math.floor(runs / 2);
    if (tracing) await browser.startTracing(page, { categories: TRACE_CATEGORIES });
    await page.goto(link);
    await firstSeen;
    if (tracing) writeFileSync(traceFile, await browser.stopTracing());
    if (cdp && profileDir) {
      const { profile } = await cdp.send('Profiler.stop');
      writeFileSync(`${profileDir}/run-${i}.cpuprofile`, JSON.stringify(profile));
    }
    const first = await page.evaluate(() => window.__bench?.firstPacket ?? NaN);
    const rtc = await page.evaluate(() => ({
      offer: window.__bench?.offer ?? NaN,
      answer: window.__bench?.answer ?? NaN,
      relay: window.__bench?.relay ?? NaN,
      remoteRelay: window.__bench?.remoteRelay ?? NaN,
    }));
    const hostAnswer = await host.evaluate((n) => window.__benchHost?.answered[n] ?? null, hostAnswersBefore);
    const hostRelay = hostAnswer?.answer != null && hostAnswer.relay != null ? hostAnswer.relay - hostAnswer.answer : NaN;
    const marks = await marksOf(page);
    const nav = await page.evaluate(() => {
      const n = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
      return { response: n?.responseEnd ?? NaN, dom: n?.domContentLoadedEventEnd ?? NaN, load: n?.loadEventEnd ?? NaN };
    });
    if (process.env['BENCH_VERBOSE']) console.log(JSON.stringify({ first, marks, nav, rtc, hostRelay }));
    expect((await stateOf(page)).role).toBe('client');
    total.push(first);
    channel.push(marks.channelOpen ?? NaN);
    joinClick.push(marks.joinStart ?? NaN);
    scriptStart.push(marks.pageStart ?? NaN);
    domLoaded.push(nav.dom);
    welcome.push(marks.welcome ?? NaN);
    joined.push(marks.joined ?? NaN);
    offer.push(rtc.offer);
    relay.push(rtc.relay);
    answer.push(rtc.answer);
    remoteRelay.push(rtc.remoteRelay);
    hostRelayAfterAnswer.push(hostRelay);
    await context.close();
    // Let the host see the player leave before the next one comes.
    await waitForState(host, () => window.hostrelay.openPeers.length === 0, null);
  }
  await hostContext.close();
  const result = {
    runsMs: total.map((v) => Math.round(v)),
    medianMs: median(total),
    medianChannelOpenMs: median(channel),
    medianJoinClickMs: median(joinClick),
    medianScriptStartMs: median(scriptStart),
    medianDomContentLoadedMs: median(domLoaded),
    medianWelcomeMs: median(welcome),
    medianJoinedMs: median(joined),
    medianOfferMs: median(offer),
    medianRelayCandidateMs: median(relay),
    medianAnswerMs: median(answer),
    medianRemoteRelayCandidateMs: median(remoteRelay),
    medianHostRelayAfterAnswerMs: median(hostRelayAfterAnswer),
  };
  writeFileSync(out, JSON.stringify(result));
  console.log(`share link → first game packet: median ${result.medianMs.toFixed(0)} ms over ${runs} runs`);
});
