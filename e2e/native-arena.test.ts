import { mkdirSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { botBinary, startBot, type RunningBot } from './bot';
import { hostRoom, until, useHarness } from './harness';

// A Go bot plays the arena against a browser host: a Chromium tab hosts an
// Arena room, `hostrelay-bot -quick arena` finds it by quick play, gets
// ready, is welcomed when the host starts, and holds Left; the tab's game
// shows the bot's player moving left. A second bot watches the game with
// `-watch CODE` and decodes the tab's spectator keyframes. Everything goes
// through the real server and its TURN, relay/relay.

const h = useHarness('native-arena');
const bots: RunningBot[] = [];

function bot(args: string[]): RunningBot {
  const b = startBot(botBinary(), ['-url', `ws://${h.server.http}/ws`, '-timeout', '60s', ...args]);
  bots.push(b);
  return b;
}

afterEach((ctx) => {
  if (ctx.task.result?.state !== 'fail') return;
  for (const b of bots) process.stderr.write(`--- bot events ${JSON.stringify(b.events)}\n${b.stderr.join('\n')}\n`);
});

afterAll(async () => {
  for (const b of bots) await b.stop();
});

/** The x of entity `id` as the host's tab draws it, or null. */
const xOf = (id: number): number | null => window.hostrelayGame?.entities().find(([e]) => e === id)?.[1].x ?? null;

describe('a Go bot in the arena', () => {
  it('joins a tab-hosted arena by quick play, moves, and is watched by a spectator bot', async () => {
    const host = await h.player('host', { name: 'Ada' });
    const code = await hostRoom(host, h.base, { name: 'Arena vs Go', mode: 'Arena', max: 4 });

    const player = bot(['-name', 'GoBot', '-quick', 'arena', '-keys', 'left', '-expect', '150']);
    const room = await player.next('room');
    expect(room).toMatchObject({ code, mode: 'Arena', host: false });
    expect(await player.next('peer_open')).toMatchObject({ local: 'relay', remote: 'relay' });
    expect(await host.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);

    // The bot readied itself; the tab starts the game like any host.
    await until(host, () => window.hostrelay.players.some((p) => p.name === 'GoBot' && p.ready), null);
    await until(host, () => !(document.getElementById('start-button') as HTMLButtonElement).disabled, null);
    await host.click('#start-button');
    const welcome = await player.next('arena_welcome');
    const slot = Number(welcome['slot']);
    expect(slot).toBeGreaterThan(0); // the host plays slot 0
    await until(host, () => window.hostrelayGame?.ready() ?? false, null, 30_000);

    // The host sees the bot's input: its player runs left from where it spawned.
    await until(host, (id) => (window.hostrelayGame?.entities().some(([e]) => e === id) ?? false), slot, 30_000);
    const x0 = (await host.evaluate(xOf, slot))!;
    await host.waitForFunction(
      ([id, below]) => (window.hostrelayGame?.entities().find(([e]) => e === id)?.[1].x ?? Infinity) < below,
      [slot, x0 - 60] as const,
      { timeout: 30_000 },
    );

    mkdirSync('test-results', { recursive: true });
    await host.screenshot({ path: 'test-results/native-arena-host.png' });

    // A spectator bot decodes the tab's keyframes: the arena's tick, its entities and the players' names.
    const watcher = bot(['-name', 'GoWatcher', '-watch', code, '-expect', '5']);
    expect(await watcher.next('spectating')).toMatchObject({ code, mode: 'Arena' });
    expect(await watcher.exited).toBe(0);
    const seen = watcher.events.filter((e) => e.event === 'spectator_frame');
    expect(seen).toHaveLength(5);
    for (const f of seen) {
      expect(f).toMatchObject({ key: true });
      expect(f['error']).toBeUndefined();
      expect(Number(f['entities'])).toBeGreaterThanOrEqual(3); // two players and the ball (and the score)
      expect(Object.values(f['names'] as Record<string, string>).sort()).toEqual(['Ada', 'GoBot']);
    }
    const ticks = seen.map((f) => Number(f['tick']));
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));

    // The player bot ends once it has its snapshots, every one hashing as the host's did.
    const summary = await player.next('summary', 60_000);
    expect(await player.exited).toBe(0);
    expect(summary).toMatchObject({ game: 'Arena', snapshots: 150, bad_packets: 0 });
    expect((summary['last'] as Record<string, unknown>)['hash_ok']).toBe(true);
    expect(Number(summary['inputs'])).toBeGreaterThan(0);
    expect(player.events.some((e) => e.event === 'bad_packet')).toBe(false);
    console.log(
      `Go bot in the arena: ${String(summary['snapshots'])} snapshots in ${Number(summary['seconds']).toFixed(1)} s, ` +
        `${String(summary['inputs'])} input packets, host's input ack ${String(summary['acked'])}; spectator ticks ${ticks.join(', ')}`,
    );
  });
});
