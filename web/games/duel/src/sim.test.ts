import { hashBytes, LockstepSession, SimClock, SimNetwork, type NetTransport } from '@hostrelay/netcode';
import { describe, expect, it } from 'vitest';
import { autopilot } from './autopilot';
import { BALL, duelGame, FP, initialDuel, isqrt, KICKOFF_FRAMES, PAUSE, PITCH_H, PITCH_W, SCORE, stepDuel, type DuelInput, type DuelState } from './sim';

const IDLE: DuelInput = { up: false, down: false, left: false, right: false, kick: false };

/** A player who changes what they hold every 5–40 frames, from a seed (a small LCG: integers only). */
function scripted(seed: number): () => DuelInput {
  let x = seed >>> 0;
  const next = (): number => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  let left = 0;
  let held = IDLE;
  return () => {
    if (left-- <= 0) {
      left = 5 + Math.floor(next() * 36);
      held = { up: next() < 0.3, down: next() < 0.3, left: next() < 0.4, right: next() < 0.4, kick: next() < 0.3 };
    }
    return held;
  };
}

/** Runs `frames` frames from the start on scripted (or autopilot) inputs; the hash after each frame. */
function run(frames: number, seeds: [number, number], pilot = false): { state: DuelState; hashes: number[] } {
  const players = [scripted(seeds[0]), scripted(seeds[1])];
  let s = duelGame.initial(2);
  const hashes: number[] = [];
  for (let f = 1; f <= frames; f++) {
    const inputs = pilot ? [autopilot(s, 0), autopilot(s, 1)] : players.map((p) => p());
    s = duelGame.step(s, inputs, f);
    hashes.push(hashBytes(duelGame.serialize(s)));
  }
  return { state: s, hashes };
}

describe('the duel sim', () => {
  it('reaches the same state hash on the same inputs, run after run, and another on other inputs', () => {
    const a = run(3600, [1, 2]);
    const b = run(3600, [1, 2]);
    expect(b.hashes).toEqual(a.hashes);
    const c = run(3600, [1, 3]);
    expect(c.hashes[3599]).not.toBe(a.hashes[3599]);
  });

  it('keeps every value an integer and never changes the state it steps from', () => {
    let s = initialDuel();
    const p = [scripted(7), scripted(8)];
    for (let f = 1; f <= 2000; f++) {
      const before = [...s.v];
      const next = stepDuel(s, [p[0]!(), p[1]!()]);
      expect(s.v).toEqual(before);
      for (const x of next.v) expect(Number.isInteger(x) && Math.abs(x) < 2 ** 31).toBe(true);
      s = next;
    }
  });

  it('serializes to the same 60 bytes for equal states, and any one change changes the hash', () => {
    const s = run(600, [4, 5]).state;
    const bytes = duelGame.serialize(s);
    expect(bytes.length).toBe(60);
    expect(duelGame.serialize({ v: [...s.v] })).toEqual(bytes);
    for (let i = 0; i < s.v.length; i++) {
      const v = [...s.v];
      v[i] = v[i]! + 1;
      expect(hashBytes(duelGame.serialize({ v }))).not.toBe(hashBytes(bytes));
    }
    // Pinned: a change to the physics changes this, and old replays with it.
    expect(hashBytes(duelGame.serialize(initialDuel()))).toMatchInlineSnapshot(`736016409`);
  });

  it('scores for the right when the ball goes into the left goal, then kicks off after a pause', () => {
    const v = [...initialDuel().v];
    v[BALL] = 2 * FP;
    v[BALL + 1] = (PITCH_H / 2) * FP;
    v[BALL + 2] = -4 * FP;
    let s = stepDuel({ v }, [IDLE, IDLE]);
    expect(s.v.slice(SCORE, SCORE + 2)).toEqual([0, 1]);
    expect(s.v[PAUSE]).toBe(KICKOFF_FRAMES);
    expect(s.v[BALL]).toBe((PITCH_W / 2) * FP);
    const frozen = stepDuel(s, [{ ...IDLE, right: true }, IDLE]);
    expect(frozen.v.slice(0, 12)).toEqual(s.v.slice(0, 12));
    for (let i = 0; i < KICKOFF_FRAMES; i++) s = stepDuel(s, [{ ...IDLE, right: true }, IDLE]);
    expect(s.v[PAUSE]).toBe(0);
    expect(stepDuel(s, [{ ...IDLE, right: true }, IDLE]).v[0]).toBeGreaterThan(s.v[0]!);
  });

  it('scores for the left in the right goal, and bounces a ball that hits the end line outside the mouth', () => {
    const v = [...initialDuel().v];
    v[BALL] = (PITCH_W - 2) * FP;
    v[BALL + 1] = (PITCH_H / 2) * FP;
    v[BALL + 2] = 4 * FP;
    expect(stepDuel({ v }, [IDLE, IDLE]).v.slice(SCORE, SCORE + 2)).toEqual([1, 0]);
    v[BALL + 1] = 20 * FP;
    const bounced = stepDuel({ v }, [IDLE, IDLE]);
    expect(bounced.v.slice(SCORE, SCORE + 2)).toEqual([0, 0]);
    expect(bounced.v[BALL + 2]).toBeLessThan(0);
    expect(bounced.v[BALL]).toBeLessThanOrEqual(PITCH_W * FP);
  });

  it('lets the autopilots score goals on their own', () => {
    const { state } = run(60 * 60, [0, 0], true);
    expect(state.v[SCORE]! + state.v[SCORE + 1]!).toBeGreaterThan(0);
  });

  it('takes integer square roots exactly, at the edges of the squares', () => {
    for (const n of [0, 1, 2, 3, 4, 15, 16, 17, 2 ** 40 - 1, 2 ** 40, (2 ** 26 + 1) ** 2 - 1, (2 ** 26 + 1) ** 2]) {
      const r = isqrt(n);
      expect(r * r <= n && (r + 1) * (r + 1) > n).toBe(true);
    }
  });

  it('plays a rollback and a lockstep match at 100 ms RTT, 20 ms jitter, 10 % loss with no desync', () => {
    for (const mode of ['rollback', 'lockstep'] as const) {
      const clock = new SimClock();
      const net = new SimNetwork(clock, 'host');
      const make = (t: NetTransport, seed: number): LockstepSession<DuelState, DuelInput> =>
        new LockstepSession({ transport: t, game: duelGame, mode: 'rollback', readInput: scripted(seed), players: 2, scheduler: clock });
      const host = new LockstepSession({ transport: net.hostTransport(), game: duelGame, mode, readInput: scripted(11), players: 2, scheduler: clock });
      const client = make(net.addClient('c1', { latencyMs: 50, jitterMs: 20, loss: 0.1 }, 12), 12);
      const desyncs: unknown[] = [];
      for (const p of [host, client]) {
        p.on('desync', (d) => desyncs.push(d));
        p.start();
      }
      clock.advance(60_000);
      expect(client.mode).toBe(mode);
      expect(client.phase).toBe('running');
      expect(desyncs).toEqual([]);
      const f = Math.min(host.confirmedFrame, client.confirmedFrame) - 10;
      expect(f).toBeGreaterThan(3000);
      expect(client.hashLog!.get(f)).toBe(host.hashLog!.get(f));
      if (mode === 'rollback') expect(client.stats().rollbacks).toBeGreaterThan(0);
      else expect(client.stats().rollbacks).toBe(0);
    }
  });
});

describe('the duel state over the wire', () => {
  it('deserializes what it serialized, bit for bit, and refuses bytes of another length', () => {
    const { state } = run(900, [3, 4]);
    const bytes = duelGame.serialize(state);
    const back = duelGame.deserialize!(bytes);
    expect(back.v).toEqual(state.v);
    expect(hashBytes(duelGame.serialize(back))).toBe(hashBytes(bytes));
    expect(() => duelGame.deserialize!(bytes.subarray(4))).toThrow(RangeError);
  });
});
