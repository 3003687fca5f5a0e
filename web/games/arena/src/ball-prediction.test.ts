// The ball predicted on clients (issue 29), on simulated time with the real
// HostGame and ClientGame: a push or a kick shows in the frame it is made,
// corrections from another player's push converge smoothly, and the seeded
// 100 ms / 10 % loss match keeps its smoothness figures.
import { SimClock, SimNetwork, type EntityCorrection } from '@hostrelay/netcode';
import { describe, expect, it } from 'vitest';
import { arenaMatch } from './bots.test-util';
import { ClientGame } from './client-game';
import { HostGame } from './host-game';
import { BALL_ID, BALL_R, inputCodec, PLAYER_R, type ArenaInput } from './schema';

const idle = inputCodec.neutral;
const FRAME_MS = 1000 / 60;
/** The ball's corrections slide at ≤ 300 px/s (ClientGame): 5 px a frame at 60 fps. */
const BALL_SLIDE_PER_FRAME = 300 / 60 + 1e-9;
/** Largest per-frame step of the drawn ball in the seeded match below before the ball was predicted (interpolated), px. */
const TODAY_MAX_STEP = 32;
/**
 * Most player corrections shown as jumps (over 60 px) a client had in the
 * seeded match below before the ball was predicted (6, 8, 6: kicks
 * lag-compensated, others collided where they are drawn).
 */
const TODAY_MAX_PLAYER_JUMPS = 8;
/** Long enough for two players to reach a ball 350 px away and push it between them (they meet it after about 1.4 s). */
const PUSH_FRAMES = 110;

/** A host and clients on simulated time; each client's input is whatever `inputs[i]` holds when its tick reads it. */
function setup(clients: number, latencyMs: number, predictBall = true) {
  const clock = new SimClock();
  const net = new SimNetwork(clock, 'host');
  const host = new HostGame(net.hostTransport(), () => idle, clock);
  host.start();
  const inputs: ArenaInput[] = [];
  const reads: { frame: number; input: ArenaInput }[][] = [];
  let frame = 0;
  const games = Array.from({ length: clients }, (_, i) => {
    inputs.push(idle);
    reads.push([]);
    const g = new ClientGame(
      net.addClient(`c${i + 1}`, { latencyMs }, 40 + i),
      () => {
        reads[i]!.push({ frame, input: inputs[i]! });
        return inputs[i]!;
      },
      clock,
      { predictBall },
    );
    g.start();
    return g;
  });
  let frameClock = 0;
  /** Draws one frame on every client (and runs the host); returns each client's view. */
  const step = () => {
    frame++;
    frameClock += FRAME_MS;
    clock.advance(Math.max(0, frameClock - clock.now()));
    host.view();
    return games.map((g) => g.view());
  };
  const run = (ms: number) => {
    for (let t = 0; t < ms; t += FRAME_MS) step();
  };
  const me = (i: number) => host.arena.player(`c${i + 1}`)!;
  return { clock, host, games, inputs, reads, step, run, me, frame: () => frame };
}

/** Puts the ball at rest on the host and lets every client see it still. */
function placeBall(s: ReturnType<typeof setup>, x: number, y: number): void {
  Object.assign(s.host.arena.ball, { x, y, vx: 0, vy: 0 });
  s.run(1000);
}

describe('the ball, predicted', () => {
  for (const action of ['kick', 'push'] as const) {
    it(`moves on the client in the frame of the ${action} (100 ms round trip)`, () => {
      const reaction = (predictBall: boolean): number => {
        const s = setup(1, 50, predictBall);
        s.run(1500);
        const p = s.me(0);
        // The ball 40 px to our left: in kick reach (43), 11 px from touching.
        placeBall(s, p.x - 40, p.y);
        const rest = s.games[0]!.view().entities.get(BALL_ID)!;
        expect(rest.x).toBe(p.x - 40);
        s.inputs[0] = action === 'kick' ? { ...idle, kick: true } : { ...idle, left: true };
        let firstRead = -1;
        let contact = -1;
        for (let f = 0; f < 120; f++) {
          const v = s.step()[0]!;
          if (firstRead < 0) firstRead = s.reads[0]!.find((r) => r.input !== idle)?.frame ?? -1;
          const ball = v.entities.get(BALL_ID)!;
          // The push: the frame in which our predicted player first reaches the ball.
          if (contact < 0 && Math.hypot(ball.x - v.local!.x, ball.y - v.local!.y) <= PLAYER_R + BALL_R + 1) contact = s.frame();
          if (ball.x !== rest.x || ball.y !== rest.y) {
            const at = action === 'kick' ? firstRead : contact;
            expect(at).toBeGreaterThan(0);
            return s.frame() - at;
          }
        }
        throw new Error('the ball never moved');
      };
      const predicted = reaction(true);
      const interpolated = reaction(false);
      console.log(`${action}: the ball moves ${predicted} frames after the input's frame predicted, ${interpolated} interpolated`);
      expect(predicted).toBe(0);
      // Drawn from snapshots it waited a round trip plus the interpolation delay: 100 + 100 ms at least.
      expect(interpolated).toBeGreaterThanOrEqual(12);
    });
  }

  it('two clients push at once: the host decides, the client it disagrees with is corrected smoothly and converges', () => {
    const s = setup(2, 50);
    s.run(1500);
    // c1 (Blue, at 720,270) and c2 (Red, at 240,360) start at the same distance
    // from the ball (on the bisector between them), and come at it from either
    // side; up there it can squeeze out only into a wall, not into a goal.
    const a = s.me(0);
    const b = s.me(1);
    const bisector = { x: b.y - a.y, y: a.x - b.x };
    const k = (100 - (a.y + b.y) / 2) / bisector.y;
    placeBall(s, (a.x + b.x) / 2 + k * bisector.x, 100);
    const corrections: EntityCorrection[][] = [[], []];
    s.games.forEach((g, i) => g.net.on('entityCorrection', (c) => corrections[i]!.push(c)));
    const visible: number[] = [];
    const steps: number[] = [];
    const last: ({ x: number; y: number } | null)[] = [null, null];
    const towardsBall = (v: ReturnType<typeof s.step>[number]): ArenaInput => {
      const ball = v.entities.get(BALL_ID)!;
      const dx = ball.x - v.local!.x;
      const dy = ball.y - v.local!.y;
      return { ...idle, left: dx < -4, right: dx > 4, up: dy < -4, down: dy > 4 };
    };
    const score = () => s.host.arena.score.scoreL + s.host.arena.score.scoreR;
    const goals = score();
    let views = s.step();
    for (let f = 0; f < 240; f++) {
      // Both steer into the ball until they meet it, then let go.
      views.forEach((v, i) => (s.inputs[i] = f < PUSH_FRAMES ? towardsBall(v) : idle));
      views = s.step();
      views.forEach((v, i) => {
        visible.push(v.entityVisibleCorrection);
        const ball = v.entities.get(BALL_ID)!;
        const prev = last[i];
        if (prev) steps.push(Math.hypot(ball.x - prev.x, ball.y - prev.y));
        last[i] = { x: ball.x, y: ball.y };
      });
    }
    s.inputs.fill(idle);
    s.run(4000);
    const host = s.host.arena.ball;
    const counts = corrections.map((c) => c.length);
    const biggest = Math.max(0, ...corrections.flat().map((c) => c.shift));
    console.log(
      `two pushers: ${counts.join(' and ')} ball corrections, largest ${biggest.toFixed(1)} px, ` +
        `largest slide ${Math.max(...visible).toFixed(2)} px/frame, largest ball step ${Math.max(...steps).toFixed(1)} px/frame`,
    );
    expect(score()).toBe(goals); // a goal would reset the ball: a real jump, not a pushing match
    expect(counts[0]! + counts[1]!).toBeGreaterThan(0);
    expect(corrections.flat().every((c) => !c.snapped)).toBe(true);
    // No jump either: the ball moves at most its top speed (900 px/s) plus the slide per frame.
    expect(Math.max(...steps)).toBeLessThanOrEqual(900 / 60 + BALL_SLIDE_PER_FRAME);
    expect(Math.max(...visible)).toBeLessThanOrEqual(BALL_SLIDE_PER_FRAME);
    // Converged: once everything rests, each client draws the host's ball exactly.
    for (const g of s.games) {
      const drawn = g.view().entities.get(BALL_ID)!;
      expect([drawn.x, drawn.y]).toEqual([host.x, host.y]);
    }
  });

  it('a ball left behind goes back to interpolation without a pop', () => {
    const s = setup(1, 50);
    s.run(1500);
    const p = s.me(0);
    placeBall(s, p.x - 60, p.y);
    expect(s.step()[0]!.predicted.has(BALL_ID)).toBe(true);
    // Kick it away, then walk the other way: past 200 px it is released.
    s.inputs[0] = { ...idle, kick: true, left: true };
    s.run(200);
    s.inputs[0] = { ...idle, right: true };
    let released = -1;
    let prev: { x: number; y: number } | null = null;
    let biggest = 0;
    for (let f = 0; f < 180; f++) {
      const v = s.step()[0]!;
      const ball = v.entities.get(BALL_ID)!;
      if (released < 0 && !v.predicted.has(BALL_ID)) released = f;
      if (prev) biggest = Math.max(biggest, Math.hypot(ball.x - prev.x, ball.y - prev.y));
      prev = { x: ball.x, y: ball.y };
      expect(v.snapped).toBe(0);
    }
    console.log(`released after ${released} frames; largest ball step ${biggest.toFixed(1)} px/frame`);
    expect(released).toBeGreaterThan(0);
    // The ball's own speed (a kick: 520 px/s plus half the kicker's) plus the slide, per frame.
    expect(biggest).toBeLessThanOrEqual((520 + 130) / 60 + BALL_SLIDE_PER_FRAME);
  });
});

describe('the seeded match at 100 ms RTT, 20 ms jitter, 10 % loss', () => {
  const quantile = (xs: number[], q: number): number => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;

  it('keeps today’s smoothness with the ball predicted (figures before and after)', () => {
    const figures = (predictBall: boolean) => {
      const m = arenaMatch({ clients: 3, conditions: { latencyMs: 50, jitterMs: 20, loss: 0.1 }, seed: 3, predictBall });
      m.run(60_000);
      return m.clients.map((c) => {
        const s = c.game.net.stats();
        const steps: number[] = [];
        for (let i = 1; i < c.balls.length; i++) {
          const d = Math.hypot(c.balls[i]![0] - c.balls[i - 1]![0], c.balls[i]![1] - c.balls[i - 1]![1]);
          if (d < 200) steps.push(d); // a goal puts the ball back on the spot: a jump, not a step
        }
        const line =
          `${predictBall ? 'predicted' : 'interpolated'} ${c.id}: dry ${((c.dry / c.frames) * 100).toFixed(2)} %, ` +
          `player ${s.corrections} corrections (${s.snaps} jumps), max visible ${Math.max(...c.visible).toFixed(2)} px/frame; ` +
          `ball ${s.entityCorrections} corrections (${s.entitySnaps} jumps, largest ${s.maxEntityCorrection.toFixed(1)} px), ` +
          `max slide ${s.maxEntityVisibleCorrection.toFixed(2)} px/frame, ball step max ${Math.max(...steps).toFixed(1)} p99 ${quantile(steps, 0.99).toFixed(1)} px/frame`;
        console.log(line);
        return { dry: c.dry / c.frames, jumps: s.snaps, visible: Math.max(...c.visible), slide: s.maxEntityVisibleCorrection, step: Math.max(...steps), desyncs: s.desyncs, ballCorrections: s.entityCorrections };
      });
    };
    const before = figures(false);
    const after = figures(true);
    for (const a of after) {
      expect(a.desyncs).toBe(0);
      expect(a.dry).toBeLessThan(0.01);
      expect(a.visible).toBeLessThanOrEqual(150 / 60 + 1e-9); // the player's slide, as today
      // Shoves mispredicted by 60 px or more, and goal resets: no more than today
      // (16–27 with the others collided where they are drawn, see ClientGame.view).
      expect(a.jumps).toBeLessThanOrEqual(TODAY_MAX_PLAYER_JUMPS);
      expect(a.slide).toBeLessThanOrEqual(BALL_SLIDE_PER_FRAME);
      expect(a.ballCorrections).toBeGreaterThan(0); // others push the ball too: it really was corrected
    }
    // No frame moves the ball further than interpolation did before this change
    // (32.2–35.4 px on this seed, when kicks were judged against the rewound ball).
    for (const a of after) expect(a.step).toBeLessThanOrEqual(TODAY_MAX_STEP);
    expect(before.length).toBe(after.length);
  }, 120_000);
});
