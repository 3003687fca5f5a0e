import { describe, expect, it } from 'vitest';
import { SimClock } from '../testing/sim-clock.js';
import { SimNetwork } from '../testing/sim-network.js';
import { buttonsCodec, type Buttons } from '../wire/input-codec.js';
import type { DeterministicGame } from './game.js';
import { InputReferee } from './referee.js';
import { LockstepSession } from './session.js';
import { Timeline } from './timeline.js';

type In = Buttons<'a'>;
const A: In = { a: true };
const N: In = { a: false };
/** State: each player's count of frames with `a` held, and the frame log of who held it. */
const counter: DeterministicGame<readonly number[], In> = {
  input: buttonsCodec(['a'] as const),
  initial: (players) => Array.from({ length: players }, () => 0),
  step: (s, inputs) => s.map((c, i) => c + (inputs[i]!.a ? 1 : 0)),
  serialize: (s) => new Uint8Array(Int32Array.from(s).buffer),
};

describe('Timeline rollback window', () => {
  it('rolls back exactly maxRollback frames at the limit and reaches the right state', () => {
    const tl = new Timeline(counter, 2, 0, 8);
    for (let f = 1; f <= 8; f++) {
      tl.setLocalInput(f, A);
      expect(tl.canAdvance(true)).toBe(true);
      tl.advance();
    }
    expect(tl.state).toEqual([8, 0]); // player 1 predicted idle
    expect(tl.heldStates).toBe(9); // frames 0..8: the window and the last confirmed state
    // The host says player 1 held `a` from frame 1: all 8 frames are run again.
    for (let f = 1; f <= 8; f++) expect(tl.confirm(f, [A, A])).toBe(true);
    tl.reconcile();
    expect(tl.state).toEqual([8, 8]);
    expect(tl.stats).toEqual({ rollbacks: 1, framesResimulated: 8, maxRollbackDepth: 8, predictionMisses: 8 });
    expect(tl.syncFrame).toBe(8);
    expect(tl.heldStates).toBe(1);
  });

  it('waits one past the limit instead of keeping another state, and goes on once a frame is confirmed', () => {
    const tl = new Timeline(counter, 2, 0, 8);
    for (let f = 1; f <= 8; f++) tl.advance();
    expect(tl.canAdvance(true)).toBe(false); // a 9th unconfirmed frame would be past the window
    expect(tl.heldStates).toBe(9);
    expect(tl.confirm(1, [N, N])).toBe(true);
    tl.reconcile();
    expect(tl.canAdvance(true)).toBe(true);
    tl.advance();
    expect(tl.heldStates).toBe(9);
    expect(tl.stats.rollbacks).toBe(0); // the prediction was right
  });

  it('takes confirmed frames only in order and not past what a packet can cover', () => {
    const tl = new Timeline(counter, 2, 0, 8);
    expect(tl.confirm(2, [N, N])).toBe(false);
    expect(tl.confirm(1, [N])).toBe(false);
    expect(tl.confirm(1, [N, N])).toBe(true);
    expect(tl.confirm(1, [A, A])).toBe(false);
    let f = 2;
    while (tl.confirm(f, [N, N])) f++;
    expect(f).toBe(241); // MAX_LOCKSTEP_WINDOW ahead of frame 0
    expect(tl.canAdvance(false)).toBe(true);
  });
});

describe('InputReferee', () => {
  it('makes the delay frames neutral, takes the first input per frame, fills a late one with the last and counts it', () => {
    const ref = new InputReferee(counter.input, 2, 2);
    ref.submit(0, 1, A); // a delay frame: nobody's input can be for it
    ref.submit(0, 3, A);
    ref.submit(1, 3, N);
    ref.submit(1, 3, A); // a resend that differs: the first stands
    expect(ref.nextReady()).toBe(true);
    expect([ref.confirmNext(), ref.confirmNext()]).toEqual([
      [N, N],
      [N, N],
    ]);
    expect(ref.confirmNext()).toEqual([A, N]);
    ref.submit(0, 4, N);
    expect(ref.nextReady()).toBe(false);
    expect(ref.confirmNext()).toEqual([N, N]); // player 1 late: its last input
    expect(ref.filled).toEqual([0, 1]);
    ref.submit(1, 4, A); // too late now
    expect(ref.ackFor(1)).toBe(4);
    expect(ref.rowsFrom(3, 10)).toEqual({ firstFrame: 3, rows: [[A, N], [N, N]], roster: [3, 3] });
  });

  it('ignores inputs further ahead than the window, so a client cannot grow its table', () => {
    const ref = new InputReferee(counter.input, 2, 0);
    ref.submit(1, 240, A);
    ref.submit(1, 241, A);
    ref.submit(1, 2 ** 40, A);
    expect(ref.pendingFrames).toBe(1);
  });
});

describe('LockstepSession', () => {
  it.each(['rollback', 'lockstep'] as const)('%s: applies an input exactly inputDelay frames after the frame it was read in, on every peer', (mode) => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'host');
    const delay = 5;
    const readAt: number[][] = [[], []];
    const applied: number[][] = [[], []];
    const sessions = [net.hostTransport(), net.addClient('c1', { latencyMs: 20 }, 3)].map((transport, i) => {
      let frames = 0;
      const s: LockstepSession<readonly number[], In> = new LockstepSession({
        transport,
        game: counter,
        mode,
        inputDelay: delay,
        scheduler: clock,
        // Hold `a` in the one frame read as the 30th (the host) or the 40th read (the client).
        readInput: () => {
          frames++;
          const on = frames === (i === 0 ? 30 : 40);
          if (on) readAt[i]!.push(s.frame + 1);
          return on ? A : N;
        },
      });
      s.on('confirm', (f, inputs) => inputs.forEach((inp, slot) => inp.a && slot === s.slot && applied[i]!.push(f)));
      return s;
    });
    for (const s of sessions) s.start();
    clock.advance(3000);
    expect(sessions.map((s) => s.phase)).toEqual(['running', 'running']);
    // The host's input: read while running frame k, applied at frame k + delay.
    expect(applied[0]).toEqual([readAt[0]![0]! + delay]);
    if (mode === 'rollback') expect(applied[1]).toEqual([readAt[1]![0]! + delay]);
    else expect(applied[1]![0]).toBeGreaterThanOrEqual(readAt[1]![0]! + delay); // a lockstep client's lead adds the round trip
    const hs = sessions.map((s) => s.hashLog!.get(Math.min(...sessions.map((x) => x.confirmedFrame))));
    expect(hs[0]).toBe(hs[1]);
  });

  it('fails with a clear reason when the host goes silent and the window stays full, holding no more than the window', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'host');
    const host = new LockstepSession({ transport: net.hostTransport(), game: counter, mode: 'rollback', readInput: () => N, maxRollback: 6, scheduler: clock, stallTimeoutMs: 1000 });
    const client = new LockstepSession({ transport: net.addClient('c1', { latencyMs: 20 }, 4), game: counter, mode: 'rollback', readInput: () => A, scheduler: clock, stallTimeoutMs: 1000 });
    const failures: string[] = [];
    client.on('failed', (r) => failures.push(r));
    host.start();
    client.start();
    clock.advance(1000);
    expect(client.phase).toBe('running');
    host.stop(); // the host's tab freezes: no more confirmed frames
    clock.advance(300); // what was in flight lands
    const at = client.confirmedFrame;
    expect(client.frame - client.confirmedFrame).toBe(6); // the window full, not one frame past it
    clock.advance(200);
    expect([client.frame, client.confirmedFrame]).toEqual([at + 6, at]);
    expect(client.stats().stalledTicks).toBeGreaterThan(20);
    expect(client.phase).toBe('running');
    clock.advance(1000);
    expect(client.phase).toBe('failed');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^netcode: no frame confirmed for 1000 ms/);
  });
});
