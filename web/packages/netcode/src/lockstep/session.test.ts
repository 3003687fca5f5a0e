import { describe, expect, it } from 'vitest';
import { kickballMatch, type KickballMatch } from '../testing/kickball.test-util.js';
import { firstDivergentTick } from '../wire/state-hash.js';
import type { Desync } from './session.js';

const BAD = { latencyMs: 50, jitterMs: 20, loss: 0.1 }; // each way: 100 ms RTT, ± 20 ms, 10 % loss

function watch(m: KickballMatch): { desyncs: Desync[][]; failures: string[] } {
  const desyncs = m.peers.map(() => [] as Desync[]);
  const failures: string[] = [];
  m.peers.forEach((p, i) => {
    p.on('desync', (d) => desyncs[i]!.push(d));
    p.on('failed', (r) => failures.push(`peer ${i}: ${r}`));
  });
  return { desyncs, failures };
}

/** Every peer's hash of the newest frame all of them confirmed. */
function finalHashes(m: KickballMatch): { frame: number; hashes: (number | undefined)[] } {
  const frame = Math.min(...m.peers.map((p) => p.confirmedFrame));
  return { frame, hashes: m.peers.map((p) => p.hashLog?.get(frame)) };
}

describe.each(['rollback', 'lockstep'] as const)('%s kickball, host and 2 clients, 10 minutes at 100 ms RTT / 20 ms jitter / 10 % loss', (mode) => {
  it('never desyncs, ends on equal state hashes, and reports its figures', () => {
    const m = kickballMatch({ mode, clients: 2, conditions: BAD, seed: 7 });
    const seen = watch(m);
    for (let s = 0; s < 600; s++) m.clock.advance(1000);
    expect(seen.failures).toEqual([]);
    expect(seen.desyncs.flat()).toEqual([]);
    const { frame, hashes } = finalHashes(m);
    expect(frame).toBeGreaterThan(60 * 590);
    expect(new Set(hashes).size).toBe(1);
    expect(hashes[0]).toBeTypeOf('number');
    for (const p of m.peers.slice(1)) expect(firstDivergentTick(m.peers[0]!.hashLog!, p.hashLog!)).toBeNull();
    for (const [i, p] of m.peers.entries()) {
      const s = p.stats();
      console.log(
        `${mode} peer ${i}: frame ${s.frame} confirmed ${s.confirmedFrame}, rollbacks ${s.rollbacks} (${s.rollbacksPerSecond.toFixed(2)}/s), ` +
          `re-simulated ${s.framesResimulated} (${(s.framesResimulated / (s.frame / 60)).toFixed(1)}/s), max depth ${s.maxRollbackDepth}, ` +
          `prediction misses ${s.predictionMisses}, stalled ticks ${s.stalledTicks}, late inputs ${JSON.stringify(s.lateInputs)}, rtt ${s.rttMs.toFixed(0)} ms`,
      );
    }
    if (mode === 'rollback') expect(m.peers[1]!.stats().rollbacks).toBeGreaterThan(0);
    else expect(m.peers.every((p) => p.stats().rollbacks === 0)).toBe(true);
  });

  it('names the first divergent frame when one client perturbs its step', () => {
    const m = kickballMatch({ mode, clients: 2, conditions: BAD, seed: 8, perturb: { slot: 2, frame: 1234 } });
    const seen = watch(m);
    for (let s = 0; s < 40; s++) m.clock.advance(1000);
    expect(seen.failures).toEqual([]);
    // Slots go by who said hello first: find the peers by slot.
    const bySlot = (slot: number): number => m.peers.findIndex((p) => p.slot === slot);
    expect(seen.desyncs[bySlot(0)]).toEqual([{ slot: 2, frame: 1234 }]); // the host, the referee
    expect(seen.desyncs[bySlot(1)]).toEqual([]);
    expect(seen.desyncs[bySlot(2)]).toEqual([{ slot: 2, frame: 1234 }]); // told by the host
    expect(firstDivergentTick(m.peers[0]!.hashLog!, m.peers[bySlot(2)]!.hashLog!)).toBe(1234);
    expect(firstDivergentTick(m.peers[0]!.hashLog!, m.peers[bySlot(1)]!.hashLog!)).toBeNull();
  });
});

// The browser duel (e2e/duel.test.ts) switches the client's link to 100 ms
// each way mid-match: a 200 ms round trip, past what a 10-frame window with
// 2 frames of input delay covers (~180 ms). Before the client raised its own
// input delay, its window filled, it settled 6-7 frames behind the host and
// every one of its inputs came after the host's deadline (60 late a second, for good).
describe('rollback kickball, host and 1 client, the link stepped from perfect to 100 ms each way / 20 ms jitter / 10 % loss at 30 s', () => {
  const STEP = { latencyMs: 100, jitterMs: 20, loss: 0.1, duplicate: 0, reorder: 0 };
  it('stops filling the client\'s inputs within 5 s of the step, and fills few over 10 minutes', () => {
    const m = kickballMatch({ mode: 'rollback', clients: 1, conditions: {}, seed: 7 });
    const seen = watch(m);
    const late = (): number => m.peers[0]!.stats().lateInputs[1] ?? 0;
    const perSecond: number[] = [];
    for (let s = 0; s < 600; s++) {
      if (s === 30) m.links[0]!.setConditions(STEP);
      const before = late();
      m.clock.advance(1000);
      perSecond.push(late() - before);
    }
    expect(seen.failures).toEqual([]);
    expect(seen.desyncs.flat()).toEqual([]);
    expect(perSecond.slice(0, 30).every((n) => n === 0)).toBe(true);
    // From 5 s after the step on, a late input is a loss burst, not the rule.
    const after = perSecond.slice(35);
    expect(after.filter((n) => n > 0).length).toBeLessThan(after.length / 20);
    expect(late()).toBeLessThanOrEqual(60);
    const c = m.peers[1]!.stats();
    expect(c.inputDelay).toBeGreaterThan(2);
    console.log(`rollback step: late inputs ${late()} (first 5 s after the step ${perSecond.slice(30, 35).join(', ')}), client input delay ${c.inputDelay}, stalled ${c.stalledTicks}, rtt ${c.rttMs.toFixed(0)} ms`);
  });

  it('lowers the raised input delay back to the host\'s when the link recovers', () => {
    const m = kickballMatch({ mode: 'rollback', clients: 1, conditions: {}, seed: 7 });
    const seen = watch(m);
    const client = m.peers[1]!;
    for (let s = 0; s < 60; s++) {
      if (s === 10) m.links[0]!.setConditions(STEP);
      if (s === 30) m.links[0]!.setConditions({ latencyMs: 0, jitterMs: 0, loss: 0 });
      m.clock.advance(1000);
      if (s === 29) expect(client.stats().inputDelay).toBeGreaterThan(2);
    }
    expect(seen.failures).toEqual([]);
    expect(client.stats().inputDelay).toBe(2);
    expect(m.peers[0]!.stats().lateInputs[1]).toBe(0);
  });

  it('caps the raised input delay at 60 frames (1 s): below the cap it follows the round trip, past it it stays at 60', () => {
    const delayAt = (latencyMs: number): number => {
      const m = kickballMatch({ mode: 'rollback', clients: 1, conditions: { latencyMs }, seed: 7, session: { stallTimeoutMs: 60_000 } });
      for (let s = 0; s < 20; s++) m.clock.advance(1000);
      const c = m.peers[1]!.stats();
      expect(m.peers[1]!.phase).toBe('running');
      return c.inputDelay;
    };
    const below = delayAt(480); // ~960 ms round trip: ~58 frames + 3 − 10
    expect(below).toBeGreaterThan(45);
    expect(below).toBeLessThan(60);
    expect(delayAt(700)).toBe(60); // ~1,400 ms: would be ~77
  });
});
