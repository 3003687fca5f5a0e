import { MAX_LOCKSTEP_WINDOW } from '../wire/lockstep-packets.js';
import { hashBytes, HashLog } from '../wire/state-hash.js';
import type { DeterministicGame } from './game.js';

/** What rollback cost so far, on one peer. */
export interface TimelineStats {
  /** Times a confirmed input differed from what a frame had run with, so frames were run again. */
  rollbacks: number;
  /** Frames run again because of those rollbacks. */
  framesResimulated: number;
  /** The most frames one rollback went back. */
  maxRollbackDepth: number;
  /** Inputs (frame × player) that turned out different from the prediction a frame ran with. */
  predictionMisses: number;
}

/**
 * One peer's run of a deterministic game: the state of every frame not yet
 * confirmed, the inputs each ran with, and the confirmed inputs from the
 * host. Frames run ahead on predicted inputs (each player repeats their
 * last confirmed one; our own are known), and a confirmed input that
 * differs sends the run back to that frame to simulate forward again.
 *
 * Memory is bounded by the rollback window: at most `maxRollback`
 * unconfirmed frames are ever run, and states older than the newest
 * confirmed one are dropped, so a correction can never reach past what is
 * kept. canAdvance() says when the window is full; the caller waits.
 */
export class Timeline<S, I> {
  /** The newest frame run. */
  frame = 0;
  /** The newest frame run with confirmed inputs for it and every frame before it. */
  syncFrame = 0;
  /** The newest frame whose confirmed inputs are here (ahead of `frame` when they arrive early). */
  newestConfirmed = 0;
  /** The hash of the state after each confirmed frame. */
  readonly hashLog = new HashLog();
  readonly stats: TimelineStats = { rollbacks: 0, framesResimulated: 0, maxRollbackDepth: 0, predictionMisses: 0 };
  private current: S;
  /** State after each frame from syncFrame to frame. */
  private readonly states = new Map<number, S>();
  /** The inputs each frame after syncFrame ran with. */
  private readonly used = new Map<number, I[]>();
  /** Confirmed inputs for frames after syncFrame. */
  private readonly confirmed = new Map<number, I[]>();
  /** Our own inputs for frames after syncFrame. */
  private readonly local = new Map<number, I>();
  /** The newest confirmed inputs: what predictions repeat. */
  private last: I[];
  /** The earliest frame whose confirmed inputs differ from those it ran with. */
  private dirtyFrom = Infinity;

  /**
   * @param slot our own slot, whose inputs are known ahead (-1: none)
   * @param onConfirm called once per frame, in order, when its state is final
   */
  constructor(
    private readonly game: DeterministicGame<S, I>,
    readonly players: number,
    private readonly slot: number,
    readonly maxRollback: number,
    private readonly onConfirm: (frame: number, inputs: readonly I[], state: S, hash: number) => void = () => undefined,
  ) {
    if (!Number.isInteger(maxRollback) || maxRollback < 1) throw new RangeError('netcode: maxRollback must be at least 1 frame');
    this.current = game.initial(players);
    this.states.set(0, this.current);
    this.last = Array.from({ length: players }, () => game.input.neutral);
  }

  /** The state after `frame`: predicted past syncFrame. */
  get state(): S {
    return this.current;
  }

  /** Frames held for rollback now (states kept = this + 1). */
  get unconfirmed(): number {
    return this.frame - this.syncFrame;
  }

  /** Our own input for a frame, known before the host confirms it (input delay). */
  setLocalInput(frame: number, input: I): void {
    if (frame > this.syncFrame) this.local.set(frame, input);
  }

  /**
   * Takes the host's inputs for a frame. Only the next frame after those
   * already confirmed is taken (the host resends from our acknowledgement,
   * so a gap is filled by a later packet), and none further ahead than the
   * window a packet can cover.
   */
  confirm(frame: number, inputs: readonly I[]): boolean {
    if (frame !== this.newestConfirmed + 1 || frame > this.frame + MAX_LOCKSTEP_WINDOW || inputs.length !== this.players) return false;
    const row = [...inputs];
    this.newestConfirmed = frame;
    this.last = row;
    const ran = this.used.get(frame);
    if (ran) {
      let misses = 0;
      for (let p = 0; p < this.players; p++) if (!this.game.input.equals(ran[p]!, row[p]!)) misses++;
      if (misses > 0) {
        this.stats.predictionMisses += misses;
        this.dirtyFrom = Math.min(this.dirtyFrom, frame);
      }
    }
    this.confirmed.set(frame, row);
    return true;
  }

  /** Goes back to the earliest mispredicted frame and runs forward again, then moves syncFrame on. */
  reconcile(): void {
    if (this.dirtyFrom <= this.frame) {
      const from = this.dirtyFrom;
      const depth = this.frame - from + 1;
      this.stats.rollbacks++;
      this.stats.framesResimulated += depth;
      this.stats.maxRollbackDepth = Math.max(this.stats.maxRollbackDepth, depth);
      this.current = this.states.get(from - 1)!;
      for (let f = from; f <= this.frame; f++) this.run(f);
    }
    this.dirtyFrom = Infinity;
    this.settle();
  }

  /**
   * Whether one more frame may run: with prediction, while fewer than
   * maxRollback frames are unconfirmed; without, only when the next frame's
   * inputs are confirmed.
   */
  canAdvance(predict: boolean): boolean {
    if (!predict) return this.confirmed.has(this.frame + 1);
    return this.frame - this.syncFrame < this.maxRollback;
  }

  /** Runs the next frame on confirmed inputs if it has them, predicted ones if not. Call canAdvance first. */
  advance(): void {
    this.run(++this.frame);
    this.settle();
  }

  private run(frame: number): void {
    let row = this.confirmed.get(frame);
    if (!row) {
      row = [...this.last];
      const own = this.local.get(frame);
      if (this.slot >= 0 && own !== undefined) row[this.slot] = own;
    }
    this.used.set(frame, row);
    this.current = this.game.step(this.current, row, frame);
    this.states.set(frame, this.current);
  }

  private settle(): void {
    while (this.syncFrame < this.frame && this.confirmed.has(this.syncFrame + 1) && this.dirtyFrom > this.syncFrame + 1) {
      const f = ++this.syncFrame;
      const state = this.states.get(f)!;
      const row = this.confirmed.get(f)!;
      const hash = this.game.hash ? this.game.hash(state) >>> 0 : hashBytes(this.game.serialize(state));
      this.hashLog.record(f, hash);
      this.states.delete(f - 1);
      this.used.delete(f);
      this.confirmed.delete(f);
      this.local.delete(f);
      this.onConfirm(f, row, state, hash);
    }
  }

  /** States held now (for the bound's tests). */
  get heldStates(): number {
    return this.states.size;
  }
}
