import { describe, expect, it } from 'vitest';
import { MAX_SPEED } from './testing/movers.test-util.js';
import { setupMatch, type MatchClient } from './testing/match.test-util.js';

// Whole matches on simulated time through the seeded conditioner: the
// guarantees the netcode makes, measured end to end. Figures are printed so
// a regression shows by how much, not only that it failed.

const TICK = 1 / 60;

/** Every sequence 1..n applied exactly once, in order, with the content the client produced. */
function expectExactlyOnceInOrder(c: MatchClient, n: number): void {
  expect(c.applied.length).toBeGreaterThanOrEqual(n);
  const outOfPlace = c.applied.findIndex((seq, k) => seq !== k + 1);
  expect(outOfPlace).toBe(-1);
  expect(new Set(c.applied).size).toBe(c.applied.length);
  expect(c.wrongContent).toBe(0);
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

// Each match runs a minute of simulated play in about a second; allow for a busy machine.
const SLOW = 60_000;

describe('inputs under loss', () => {
  it('at 20 % loss each way, no input is lost or applied twice', () => {
    const bad = { latencyMs: 40, jitterMs: 15, loss: 0.2, duplicate: 0.05, reorder: 0.05 };
    const m = setupMatch({ clients: [1, 2, 3].map((seed) => ({ conditions: bad, seed })) });
    m.run(30_000);
    const produced = m.clients.map((c) => c.produced.length);
    m.run(2_000); // long enough for everything produced so far to get through
    for (const [i, c] of m.clients.entries()) {
      expectExactlyOnceInOrder(c, produced[i]!);
      const host = m.host.stats(c.id)!;
      const net = c.transport.stats;
      console.log(
        `${c.id}: ${c.applied.length} inputs applied once each, in order; ${net.dropped} packets dropped, ` +
          `${net.duplicated} duplicated, ${net.reordered} reordered by the conditioner; host saw ` +
          `${(host.lossIn * 100).toFixed(1)} % loss, ${host.duplicateInputs} redundant inputs, ${host.stickyTicks} late ticks`,
      );
      expect(net.dropped).toBeGreaterThan(0.15 * 2 * 32 * 60); // both directions, ~20 % of ~60 + 30 packets/s
      expect(host.lossIn).toBeGreaterThan(0.1);
      expect(host.inputsApplied).toBe(c.applied.length);
    }
  }, SLOW);
});

describe('prediction', () => {
  it('with no loss every prediction matches the host exactly', () => {
    const m = setupMatch({ clients: [{}, { conditions: { latencyMs: 50 } }, { conditions: { latencyMs: 120 } }] });
    m.run(20_000);
    for (const c of m.clients) {
      const s = c.client.stats();
      console.log(`${c.id}: ${s.predictionsChecked} predictions checked against the host, ${s.corrections} wrong`);
      expect(s.predictionsChecked).toBeGreaterThan(20 * 30 * 0.9);
      expect(c.corrections).toEqual([]);
      expect(Math.max(...c.visible)).toBe(0);
    }
  }, SLOW);

  it('under loss, every correction is explained by a late input', () => {
    const m = setupMatch({ clients: [4, 5, 6].map((seed) => ({ conditions: { latencyMs: 50, jitterMs: 20, loss: 0.1 }, seed })) });
    m.run(30_000);
    const all = m.clients.flatMap((c) => c.corrections);
    expect(all.length).toBeGreaterThan(0);
    for (const corr of all) expect(corr.lateTicks).toBeGreaterThan(0);
  }, SLOW);
});

describe('a 60 s match at 100 ms RTT, 20 ms jitter and 10 % loss', () => {
  // Bound on the local player's visible correction, per frame at 60 fps.
  // In this game players never touch, so host and prediction differ only
  // when an input arrives late and the host repeats the previous one: one
  // extra tick of movement, at most MAX_SPEED·dt = 5 units. A correction
  // becomes an offset that decays with τ = 100 ms, so one frame shows at
  // most 1 − e^(−16.7/100) ≈ 15.4 % of the offset: 0.77 units for one late
  // tick. The offset is the sum of recent corrections; we allow two late
  // ticks within one smoothing time, 1.6 units per frame: a third of the
  // player's own motion per frame at full speed, read as a slight easing
  // rather than a jump. No single correction may exceed two late ticks.
  const VISIBLE_BOUND = 2 * MAX_SPEED * TICK * (1 - Math.exp(-1000 / 60 / 100)) + 0.05;
  const SHIFT_BOUND = 2 * MAX_SPEED * TICK;

  for (const seed of [11, 12, 13]) {
    it(`keeps interpolation fed and corrections small (seed ${seed})`, () => {
      const bad = { latencyMs: 50, jitterMs: 20, loss: 0.1 };
      const m = setupMatch({
        clients: [{ conditions: bad, seed }, { conditions: bad, seed: seed + 100 }],
        validation: { rules: { maxSpeed: MAX_SPEED, maxTeleport: 50 }, position: (id) => m.world.movers.get(id)?.e ?? null },
      });
      const violations: string[] = [];
      m.host.on('violation', (v) => violations.push(`${v.playerId} ${v.kind} ${v.detail}`));
      m.run(60_000);
      for (const c of m.clients) {
        const s = c.client.stats();
        const dry = c.dryFrames / c.frames;
        const maxVisible = Math.max(...c.visible);
        const maxShift = Math.max(0, ...c.corrections.map((x) => x.shift));
        console.log(
          `seed ${seed} ${c.id}: dry ${(dry * 100).toFixed(2)} % of ${c.frames} frames; ${c.corrections.length} corrections, ` +
            `max shift ${maxShift.toFixed(2)}, max visible ${maxVisible.toFixed(3)}/frame (p99 ${quantile(c.visible, 0.99).toFixed(3)}); ` +
            `delay ${s.interpDelayMs.toFixed(0)} ms, RTT ${s.rttMs?.toFixed(0)} ms, loss in ${(s.lossIn * 100).toFixed(1)} % out ${(s.lossOut * 100).toFixed(1)} %, ` +
            `${s.stickyTicks} late ticks, ${c.desyncs} desyncs`,
        );
        expect(c.frames).toBeGreaterThan(3500);
        expect(dry).toBeLessThan(0.01);
        expect(maxVisible).toBeLessThanOrEqual(VISIBLE_BOUND);
        expect(maxShift).toBeLessThanOrEqual(SHIFT_BOUND);
        expect(s.snaps).toBe(0);
        expect(c.desyncs).toBe(0);
        // The figures the netgraph shows match the conditions.
        expect(s.rttMs).toBeGreaterThan(80);
        expect(s.rttMs).toBeLessThan(160);
        expect(s.lossIn).toBeLessThan(0.25);
        expect(s.interpDelayMs).toBeGreaterThanOrEqual(100);
      }
      expect(violations).toEqual([]);
    }, SLOW);
  }
});

describe('delta compression', () => {
  it('reconstructs every snapshot exactly under loss, duplication and reordering, for fewer bytes', () => {
    const bad = { latencyMs: 30, jitterMs: 10, loss: 0.15, duplicate: 0.05, reorder: 0.1 };
    const bytes = (delta: boolean): number => {
      const m = setupMatch({ deltaCompression: delta, clients: [{ conditions: bad, seed: 7 }, { conditions: bad, seed: 8 }, {}] });
      m.run(15_000);
      let sum = 0;
      for (const c of m.clients) {
        expect(c.desyncs).toBe(0);
        expect(c.client.hashLog.ticks().length).toBeGreaterThan(300);
        sum += m.net.wire('host').bytesOut;
      }
      return sum;
    };
    const full = bytes(false);
    const delta = bytes(true);
    console.log(`host → clients: ${full} B full, ${delta} B delta (${((delta / full) * 100).toFixed(0)} %)`);
    expect(delta).toBeLessThan(full * 0.9);
  }, SLOW);
});

describe('validation', () => {
  it('kicks a player whose movement breaks the speed limit, and only them', () => {
    let t = 0;
    const cheater = () => ({ up: false, down: false, left: false, right: ++t % 240 < 120, boost: t > 120 });
    const m = setupMatch({
      clients: [{ input: cheater }, {}],
      validation: { rules: { maxSpeed: MAX_SPEED, maxTeleport: 50 }, position: (id) => m.world.movers.get(id)?.e ?? null },
    });
    const kicked: string[] = [];
    m.host.on('kick', (p, reason) => kicked.push(`${p.id}: ${reason}`));
    let told = '';
    m.clients[0]!.client.on('kicked', (reason) => (told = reason));
    m.run(10_000);
    expect(kicked).toHaveLength(1);
    expect(kicked[0]).toMatch(/^c1: speed/);
    expect(told).toMatch(/^speed/);
    expect(m.host.players.map((p) => p.id)).toEqual(['host', 'c2']);
  }, SLOW);
});
