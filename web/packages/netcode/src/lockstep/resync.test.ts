import { describe, expect, it } from 'vitest';
import { SimClock } from '../testing/sim-clock.js';
import { SimNetwork } from '../testing/sim-network.js';
import { kickballMatch, type Kickball, type KickballMatch, type KickInput } from '../testing/kickball.test-util.js';
import { buttonsCodec, type Buttons } from '../wire/input-codec.js';
import { firstDivergentTick } from '../wire/state-hash.js';
import type { DeterministicGame } from './game.js';
import { LockstepSession, type Resync } from './session.js';

// Seats that change mid-match, resumes, desync heals and the mode switch,
// all through one mechanism: the host's state after its newest confirmed
// frame, sent at that frame boundary, and the confirmed frames after it.
// Simulated time; the network is the figures' 100 ms RTT, 20 ms jitter,
// 10 % loss (each way 50 ms ± 20 ms, 10 %), seeded.

const BAD = { latencyMs: 50, jitterMs: 20, loss: 0.1 };

type Peer = LockstepSession<Kickball, KickInput>;

function watch(peers: Peer[]): { failures: string[]; resyncs: Resync[][] } {
  const failures: string[] = [];
  const resyncs = peers.map(() => [] as Resync[]);
  peers.forEach((p, i) => {
    p.on('failed', (r) => failures.push(`peer ${i}: ${r}`));
    p.on('resync', (r) => resyncs[i]!.push(r));
  });
  return { failures, resyncs };
}

/** The newest frame every peer confirmed, and whether all of them hold the same hash for it. */
function agree(peers: Peer[]): { frame: number; same: boolean } {
  const frame = Math.min(...peers.map((p) => p.confirmedFrame));
  const hashes = peers.map((p) => p.hashLog?.get(frame));
  return { frame, same: hashes[0] !== undefined && hashes.every((h) => h === hashes[0]) };
}

const bySlot = (m: KickballMatch, slot: number): number => m.peers.findIndex((p) => p.slot === slot);
const seconds = (m: KickballMatch, s: number): void => {
  for (let i = 0; i < s; i++) m.clock.advance(1000);
};

/**
 * A late joiner: how long from its link opening to its first confirmed
 * frame, and whether it then plays in step with everyone.
 */
function lateJoin(mode: 'rollback' | 'lockstep', seed: number): { firstFrameMs: number; m: KickballMatch; joiner: Peer; failures: string[] } {
  const m = kickballMatch({ mode, clients: 2, conditions: BAD, seed });
  const seen = watch(m.peers);
  seconds(m, 10);
  const leaver = bySlot(m, 2);
  m.net.removeClient(`c${leaver}`);
  m.peers[leaver]!.stop();
  seconds(m, 2);
  const t0 = m.clock.now();
  const { peer: joiner } = m.make('c3', BAD, seed * 100 + 3);
  let first = -1;
  joiner.on('confirm', () => {
    if (first < 0) first = m.clock.now();
  });
  joiner.on('failed', (r) => seen.failures.push(`joiner: ${r}`));
  seconds(m, 20);
  return { firstFrameMs: first - t0, m, joiner, failures: seen.failures };
}

describe.each(['rollback', 'lockstep'] as const)('%s kickball at 100 ms RTT / 20 ms jitter / 10 %% loss', (mode) => {
  it('empties a seat when its player leaves, at one frame on every peer, and the others play on in step', () => {
    const m = kickballMatch({ mode, clients: 2, conditions: BAD, seed: 7 });
    const seen = watch(m.peers);
    seconds(m, 10);
    const leaver = bySlot(m, 2);
    const stay = m.peers.filter((_, i) => i !== leaver);
    // Every staying peer sees the seat empty at the same confirmed frame, and its input neutral from there on.
    const seats = stay.map(() => [] as [number, boolean, number][]);
    const active = stay.map(() => 0);
    stay.forEach((p, i) => {
      p.on('seat', (...e) => seats[i]!.push(e));
      p.on('confirm', (_f, inputs) => {
        const n = inputs[2]!;
        const left = seats[i]!.length > 0;
        if (left && (n.up || n.down || n.left || n.right)) active[i]!++;
      });
    });
    m.net.removeClient(`c${leaver}`);
    m.peers[leaver]!.stop();
    seconds(m, 20);
    expect(seen.failures).toEqual([]);
    for (const p of stay) expect(p.roster).toEqual([true, true, false]);
    expect(agree(stay).same).toBe(true);
    expect(seats[0]).toHaveLength(1);
    expect(seats[0]![0]!.slice(0, 2)).toEqual([2, false]);
    expect(seats[0]![0]![2]).toBeGreaterThan(60 * 9); // after the leave at 10 s (the match began a few frames in)
    for (const s of seats) expect(s).toEqual(seats[0]);
    expect(active).toEqual(stay.map(() => 0));
  });

  it('seats a newcomer mid-match in the free seat: it gets the host state at a frame boundary and plays in step', () => {
    const { m, joiner, failures, firstFrameMs } = lateJoin(mode, 7);
    expect(failures).toEqual([]);
    expect(joiner.slot).toBe(2);
    expect(joiner.phase).toBe('running');
    expect(joiner.mode).toBe(mode);
    expect(m.peers[0]!.roster).toEqual([true, true, true]);
    const playing = [m.peers[0]!, m.peers[bySlot(m, 1)]!, joiner];
    const { frame, same } = agree(playing);
    expect(same).toBe(true);
    expect(frame).toBeGreaterThan(60 * 30);
    expect(joiner.stats().resyncs).toBe(1);
    expect(firstFrameMs).toBeGreaterThan(0);
    // Its inputs are its own from soon after it joined: the host filled few of them.
    expect(m.peers[0]!.stats().lateInputs[2]).toBeLessThan(60);
  });

  it('resumes a player whose link went silent past the stall timeout: it fails, asks again, and plays on from the host state', () => {
    const m = kickballMatch({ mode, clients: 1, conditions: BAD, seed: 9 });
    const seen = watch(m.peers);
    const client = m.peers[1]!;
    seconds(m, 10);
    // Every game packet lost both ways (the reliable channel still carries
    // the client's hello and the host's state, which is all a resume needs).
    m.links[0]!.setConditions({ loss: 1 });
    seconds(m, 5);
    expect(seen.failures).toHaveLength(1);
    expect(seen.failures[0]).toMatch(/^peer 1: netcode: no frame confirmed for 3000 ms/);
    m.links[0]!.setConditions({ ...BAD, duplicate: 0, reorder: 0 });
    seconds(m, 10);
    expect(client.phase).toBe('running');
    expect(client.slot).toBe(1);
    expect(seen.resyncs[1]!.length).toBeGreaterThan(0);
    expect(new Set(seen.resyncs[1]!.map((r) => r.reason))).toEqual(new Set(['resume']));
    const failuresAfter = seen.failures.length;
    seconds(m, 10);
    expect(seen.failures).toHaveLength(failuresAfter);
    expect(agree(m.peers).same).toBe(true);
  });

  it('gives a player whose link closed and reopened its own seat back', () => {
    const m = kickballMatch({ mode, clients: 2, conditions: BAD, seed: 11 });
    seconds(m, 10);
    const leaver = bySlot(m, 1);
    m.net.removeClient(`c${leaver}`);
    m.peers[leaver]!.stop();
    seconds(m, 3);
    const { peer: back } = m.make(`c${leaver}`, BAD, 1111);
    const reasons: string[] = [];
    back.on('resync', (r) => reasons.push(r.reason));
    seconds(m, 15);
    expect(back.slot).toBe(1);
    expect(reasons).toEqual(['resume']);
    expect(agree([m.peers[0]!, m.peers[bySlot(m, 2)]!, back]).same).toBe(true);
  });

  it('heals a forced desync: the host sends its state, the diverged peer plays on from it, both count it', () => {
    const m = kickballMatch({ mode, clients: 2, conditions: BAD, seed: 8, perturb: { slot: 2, frame: 1234 } });
    const seen = watch(m.peers);
    const healed: { slot: number; ms: number }[] = [];
    m.peers[0]!.on('healed', (h) => healed.push(h));
    seconds(m, 40);
    expect(seen.failures).toEqual([]);
    const host = m.peers[0]!;
    const diverged = m.peers[bySlot(m, 2)]!;
    expect(healed.map((h) => h.slot)).toEqual([2]);
    expect(host.stats()).toMatchObject({ desyncs: 1, healed: 1 });
    expect(diverged.stats()).toMatchObject({ desyncs: 1, resyncs: 1, healed: 1 });
    expect(seen.resyncs[bySlot(m, 2)]!.map((r) => r.reason)).toEqual(['desync']);
    expect(seen.resyncs[bySlot(m, 1)]).toEqual([]);
    // The hash log keeps the divergence; every frame after the heal agrees.
    expect(firstDivergentTick(host.hashLog!, diverged.hashLog!)).toBe(1234);
    expect(agree(m.peers).same).toBe(true);
    console.log(`${mode} desync heal: host ${host.stats().lastHealMs.toFixed(0)} ms from detection to matching hashes, client ${diverged.stats().lastHealMs.toFixed(0)} ms from being told to playing on`);
  });
});

describe('the mode switch (kickball, host and 2 clients, 100 ms RTT / 20 ms jitter / 10 % loss)', () => {
  it.each([
    ['rollback', 'lockstep'],
    ['lockstep', 'rollback'],
  ] as const)('switches from %s to %s and back at frame boundaries, every peer following, in step throughout', (from, to) => {
    const m = kickballMatch({ mode: from, clients: 2, conditions: BAD, seed: 12 });
    const seen = watch(m.peers);
    const desyncs: unknown[] = [];
    for (const p of m.peers) p.on('desync', (d) => desyncs.push(d));
    const modes: string[][] = m.peers.map(() => []);
    m.peers.forEach((p, i) => p.on('mode', (mode) => modes[i]!.push(mode)));
    const host = m.peers[0]!;
    seconds(m, 10);
    host.switchMode(to);
    seconds(m, 2);
    const rollbacksAt = m.peers.map((p) => p.stats().rollbacks);
    seconds(m, 8);
    expect(m.peers.map((p) => p.mode)).toEqual([to, to, to]);
    const rolled = m.peers.map((p, i) => p.stats().rollbacks - rollbacksAt[i]!);
    if (to === 'lockstep') expect(rolled).toEqual([0, 0, 0]);
    else expect(rolled[1]! + rolled[2]!).toBeGreaterThan(0);
    expect(agree(m.peers).same).toBe(true);
    host.switchMode(from);
    seconds(m, 10);
    expect(m.peers.map((p) => p.mode)).toEqual([from, from, from]);
    expect(modes).toEqual(m.peers.map(() => [to, from]));
    expect(seen.failures).toEqual([]);
    expect(seen.resyncs.slice(1).map((list) => list.map((r) => r.reason))).toEqual([
      ['mode', 'mode'],
      ['mode', 'mode'],
    ]);
    expect(agree(m.peers).same).toBe(true);
    expect(desyncs).toEqual([]);
    expect(() => m.peers[1]!.switchMode(to)).toThrow(/only the host/);
  });
});

// A counter game whose state serializes to exactly `size` bytes: the state's own size is what the limits are about.
type In = Buttons<'a'>;
function padded(size: number): DeterministicGame<readonly number[], In> {
  return {
    input: buttonsCodec(['a'] as const),
    initial: (players) => Array.from({ length: players }, () => 0),
    step: (s, inputs) => s.map((c, i) => c + (inputs[i]!.a ? 1 : 0)),
    serialize: (s) => {
      const out = new Uint8Array(size);
      out.set(new Uint8Array(Int32Array.from(s).buffer));
      return out;
    },
    deserialize: (b) => Array.from(new Int32Array(b.slice(0, 8).buffer)),
  };
}

function counterMatch(hostGame: DeterministicGame<readonly number[], In>, opts: { maxStateBytes?: number } = {}) {
  const clock = new SimClock();
  const net = new SimNetwork(clock, 'host');
  const A = { a: true };
  const host = new LockstepSession({ transport: net.hostTransport(), game: hostGame, mode: 'rollback', readInput: () => A, scheduler: clock, ...opts });
  const c1 = new LockstepSession({ transport: net.addClient('c1', { latencyMs: 20 }, 1), game: hostGame, mode: 'rollback', readInput: () => A, scheduler: clock, ...opts });
  host.start();
  c1.start();
  clock.advance(3000);
  const join = (id: string, game = hostGame, more: { maxStateBytes?: number } = {}) => {
    const s = new LockstepSession({ transport: net.addClient(id, { latencyMs: 20 }, 2), game, mode: 'rollback', readInput: () => A, scheduler: clock, ...opts, ...more });
    const failures: string[] = [];
    s.on('failed', (r) => failures.push(r));
    s.start();
    return { s, failures };
  };
  /** c1's link closes: its seat is free half a second later. */
  const freeSeat = (): void => {
    net.removeClient('c1');
    c1.stop();
    clock.advance(500);
  };
  return { clock, net, host, c1, join, freeSeat };
}

describe('limits', () => {
  it('sends a state of exactly maxStateBytes in chunks (3 of 16 KiB) and refuses one a byte over it', () => {
    const at = counterMatch(padded(40_000), { maxStateBytes: 40_000 });
    at.freeSeat();
    const sent: Resync[] = [];
    at.host.on('resync', (r) => sent.push(r));
    const ok = at.join('c2');
    at.clock.advance(3000);
    expect(ok.failures).toEqual([]);
    expect(ok.s.phase).toBe('running');
    expect(sent).toEqual([expect.objectContaining({ reason: 'join', slot: 1, bytes: 40_000 })]);
    expect(at.net.wire('c2').packetsIn).toBeGreaterThan(3);
    const f = Math.min(at.host.confirmedFrame, ok.s.confirmedFrame);
    expect(ok.s.hashLog!.get(f)).toBe(at.host.hashLog!.get(f));

    const over = counterMatch(padded(40_001), { maxStateBytes: 40_000 });
    over.freeSeat();
    const refused = over.join('c2');
    over.clock.advance(3000);
    expect(refused.failures).toEqual(["netcode: the host's state is over the resync size limit"]);
    expect(refused.s.phase).toBe('failed');
    expect(over.host.roster).toEqual([true, false]);
    expect(over.host.stats().resyncs).toBe(0);
  });

  it('a client refuses a state over its own maxStateBytes with the sizes in the reason', () => {
    const m = counterMatch(padded(40_000), { maxStateBytes: 40_000 });
    m.freeSeat();
    const small = m.join('c2', padded(40_000), { maxStateBytes: 30_000 });
    m.clock.advance(3000);
    expect(small.failures).toEqual(['netcode: a resync state of 40000 bytes is over the 30000-byte limit']);
  });

  it('fails with the reason when the host state does not deserialize or does not rebuild the same bytes', () => {
    const m = counterMatch(padded(16));
    m.freeSeat();
    const strict = { ...padded(16), deserialize: (b: Uint8Array) => { if (b.length !== 8) throw new RangeError(`not 8 bytes but ${b.length}`); return [0, 0]; } };
    const refused = m.join('c2', strict);
    m.clock.advance(2000);
    expect(refused.failures).toEqual([expect.stringMatching(/^netcode: the host's state at frame \d+ did not deserialize: not 8 bytes but 16$/)]);
    const m2 = counterMatch(padded(16));
    m2.freeSeat();
    const lossy = m2.join('c2', { ...padded(16), deserialize: () => [0, 0] });
    m2.clock.advance(2000);
    expect(lossy.failures).toEqual([expect.stringMatching(/^netcode: the host's state at frame \d+ did not rebuild here \(hash \d+ ≠ \d+\)$/)]);
  });

  it('refuses a player past the last seat, and seats a newcomer once one is free', () => {
    const m = counterMatch(padded(8));
    const third = m.join('c9');
    m.clock.advance(2000);
    expect(third.failures).toEqual(['netcode: the match is full: every seat is taken']);
    expect(m.host.roster).toEqual([true, true]);
    expect(m.c1.phase).toBe('running');
    m.freeSeat();
    expect(m.host.roster).toEqual([true, false]);
    const next = m.join('c10');
    m.clock.advance(3000);
    expect(next.failures).toEqual([]);
    expect(next.s.slot).toBe(1);
    expect(m.host.roster).toEqual([true, true]);
  });

  it('refuses a newcomer when the game has no deserialize, and keeps the roster fixed as before', () => {
    const { deserialize: _, ...fixed } = padded(8);
    const m = counterMatch(fixed);
    m.freeSeat();
    const late = m.join('c2');
    m.clock.advance(2000);
    expect(late.failures).toEqual(['netcode: the match is under way and this game cannot send its state (no deserialize)']);
  });
});

// The figures in docs/netcode.md: ten seeded runs per mode at 100 ms RTT,
// 20 ms jitter, 10 % loss. Before this change neither was possible: a late
// joiner waited forever (the roster was fixed at the start) and a desync
// stayed a desync for the rest of the match.
describe('figures', () => {
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  it.each(['rollback', 'lockstep'] as const)('%s: late join time to first frame and desync-to-healed, 10 seeds', (mode) => {
    const join: number[] = [];
    const heal: number[] = [];
    for (let seed = 1; seed <= 10; seed++) {
      const { firstFrameMs, failures } = lateJoin(mode, seed);
      expect(failures).toEqual([]);
      join.push(firstFrameMs);
      const m = kickballMatch({ mode, clients: 2, conditions: BAD, seed, perturb: { slot: 2, frame: 600 + seed * 37 } });
      seconds(m, 20);
      expect(m.peers[0]!.stats().healed).toBe(1);
      heal.push(m.peers[0]!.stats().lastHealMs);
      expect(agree(m.peers).same).toBe(true);
    }
    for (const ms of join) expect(ms).toBeLessThan(2000);
    for (const ms of heal) expect(ms).toBeLessThan(2000);
    console.log(
      `${mode} figures: late join to first confirmed frame median ${median(join).toFixed(0)} ms, max ${Math.max(...join).toFixed(0)} ms; ` +
        `desync detected to healed median ${median(heal).toFixed(0)} ms, max ${Math.max(...heal).toFixed(0)} ms (${join.map((x) => x.toFixed(0)).join(' ')} | ${heal.map((x) => x.toFixed(0)).join(' ')})`,
    );
  });
});
