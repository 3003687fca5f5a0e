import { describe, expect, it } from 'vitest';
import { seededRandom } from '../transport/rng.js';
import { Schema } from '../wire/schema.js';
import { PlayoutClock, SnapshotBuffer } from './interpolation.js';

const schema = Schema.define({ x: { snapOver: 100 }, team: { interpolate: 'step' } });
const at = (x: number, team = 0) => new Map([[1, { x, team }]]);

describe('SnapshotBuffer', () => {
  it('interpolates between the snapshots around the render tick', () => {
    const b = new SnapshotBuffer(schema);
    b.insert(10, at(100));
    b.insert(14, at(140, 1)); // arrives before 12: reordered
    b.insert(12, at(120));
    expect(b.sample(11, 0)).toEqual({ entities: at(110), dry: false });
    expect(b.sample(13, 0).entities.get(1)).toEqual({ x: 130, team: 0 }); // step fields keep the older value
  });

  it('extrapolates past the newest snapshot, but only up to the cap, and says it is dry', () => {
    const b = new SnapshotBuffer(schema);
    b.insert(10, at(100));
    b.insert(12, at(120));
    expect(b.sample(13, 6)).toEqual({ entities: at(130), dry: true });
    expect(b.sample(30, 6)).toEqual({ entities: at(180), dry: true });
  });

  it('shows a jump bigger than snapOver as a jump', () => {
    const b = new SnapshotBuffer(schema);
    b.insert(10, at(900));
    b.insert(12, at(480));
    expect(b.sample(11.5, 0).entities.get(1)?.x).toBe(900);
    expect(b.sample(12, 0).entities.get(1)?.x).toBe(480);
  });

  it('adds entities when their first snapshot is reached and removes them when their last is passed', () => {
    const b = new SnapshotBuffer(schema);
    b.insert(10, new Map([[1, { x: 0, team: 0 }]]));
    b.insert(12, new Map([[2, { x: 5, team: 0 }]]));
    expect([...b.sample(11, 0).entities.keys()]).toEqual([1]);
    expect([...b.sample(12, 0).entities.keys()]).toEqual([2]);
  });
});

/** Feeds a PlayoutClock 30 Hz snapshots through a link with the given delay and loss; returns its delay and the dry share of 60 fps frames. */
function play(latencyMs: number, jitterMs: number, loss: number, seconds = 30): { delayMs: number; dry: number } {
  const rand = seededRandom(9);
  const clock = new PlayoutClock({ tickRate: 60, snapshotRate: 30 });
  const arrivals: { at: number; tick: number }[] = [];
  for (let tick = 2; tick <= seconds * 60; tick += 2) {
    if (rand() < loss) continue;
    arrivals.push({ at: (tick * 1000) / 60 + latencyMs + (rand() * 2 - 1) * jitterMs, tick });
  }
  arrivals.sort((a, b) => a.at - b.at);
  let newest = 0;
  let frames = 0;
  let dry = 0;
  let i = 0;
  for (let now = 0; now < seconds * 1000; now += 1000 / 60) {
    while (i < arrivals.length && arrivals[i]!.at <= now) {
      clock.onSnapshot(arrivals[i]!.tick, arrivals[i]!.at);
      newest = Math.max(newest, arrivals[i]!.tick);
      i++;
    }
    if (newest === 0) continue;
    const r = clock.renderTick(now);
    if (now > 5000) {
      frames++;
      if (r > newest) dry++;
    }
  }
  return { delayMs: clock.delayMs, dry: dry / frames };
}

describe('PlayoutClock', () => {
  it('sits at the 100 ms minimum on a clean link', () => {
    const r = play(40, 0, 0);
    expect(r.delayMs).toBe(100);
    expect(r.dry).toBe(0);
  });

  it('grows the delay with jitter and loss, and keeps frames fed', () => {
    const clean = play(40, 0, 0);
    const bad = play(40, 30, 0.15);
    expect(bad.delayMs).toBeGreaterThan(clean.delayMs + 20);
    expect(bad.delayMs).toBeLessThan(300);
    expect(bad.dry).toBeLessThan(0.01);
  });
});
