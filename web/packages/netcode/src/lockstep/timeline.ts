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

/** The inputs a frame ran with (or was confirmed with) and the seats taken in it (bit = slot). */
interface Row<I> {
  inputs: I[];
  roster: number;
}

/** Where a timeline starts when the host sent its state. */
export interface TimelineStart<S> {
  frame: number;
  state: S;
  roster: number;
  hashLog?: HashLog;
  stats?: TimelineStats;
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
  readonly hashLog: HashLog;
  readonly stats: TimelineStats;
  private current: S;
  /** State after each frame from syncFrame to frame, and the seats taken in it. */
  private readonly states = new Map<number, { state: S; roster: number }>();
  /** The inputs and seats each frame after syncFrame ran with. */
  private readonly used = new Map<number, Row<I>>();
  /** Confirmed inputs and seats for frames after syncFrame. */
  private readonly confirmed = new Map<number, Row<I>>();
  /** Our own inputs for frames after syncFrame. */
  private readonly local = new Map<number, I>();
  /** The newest confirmed inputs and seats: what predictions repeat. */
  private last: I[];
  private lastRoster: number;
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
    private readonly onConfirm: (frame: number, inputs: readonly I[], state: S, hash: number, roster: number) => void = () => undefined,
    /** Start from a state the host sent (a resync) instead of the initial one; the hash log and counters carry on. */
    from?: TimelineStart<S>,
  ) {
    if (!Number.isInteger(maxRollback) || maxRollback < 1) throw new RangeError('netcode: maxRollback must be at least 1 frame');
    this.current = from?.state ?? game.initial(players);
    this.lastRoster = from?.roster ?? (1 << players) - 1;
    this.frame = this.syncFrame = this.newestConfirmed = from?.frame ?? 0;
    this.states.set(this.frame, { state: this.current, roster: this.lastRoster });
    this.last = Array.from({ length: players }, () => game.input.neutral);
    this.hashLog = from?.hashLog ?? new HashLog();
    this.stats = from?.stats ?? { rollbacks: 0, framesResimulated: 0, maxRollbackDepth: 0, predictionMisses: 0 };
  }

  /** The state after `frame`: predicted past syncFrame. */
  get state(): S {
    return this.current;
  }

  /** The state after syncFrame (final) and the seats taken in it: what a resync sends. */
  get confirmedState(): { state: S; roster: number } {
    return this.states.get(this.syncFrame)!;
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
  confirm(frame: number, inputs: readonly I[], roster = this.lastRoster): boolean {
    if (frame !== this.newestConfirmed + 1 || frame > this.frame + MAX_LOCKSTEP_WINDOW || inputs.length !== this.players) return false;
    const row = [...inputs];
    this.newestConfirmed = frame;
    this.last = row;
    this.lastRoster = roster;
    const ran = this.used.get(frame);
    if (ran) {
      let misses = ran.roster === roster ? 0 : 1;
      for (let p = 0; p < this.players; p++) if (!this.game.input.equals(ran.inputs[p]!, row[p]!)) misses++;
      if (misses > 0) {
        this.stats.predictionMisses += misses;
        this.dirtyFrom = Math.min(this.dirtyFrom, frame);
      }
    }
    this.confirmed.set(frame, { inputs: row, roster });
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
      this.current = this.states.get(from - 1)!.state;
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
      // Predicted: everyone holds their last input and the seats stay as they were.
      const inputs = [...this.last];
      const own = this.local.get(frame);
      if (this.slot >= 0 && own !== undefined && (this.lastRoster & (1 << this.slot)) !== 0) inputs[this.slot] = own;
      row = { inputs, roster: this.lastRoster };
    }
    this.used.set(frame, row);
    // A join or leave is part of the frame: applied before its step, on every peer alike.
    const before = this.states.get(frame - 1)!.roster;
    let state = this.current;
    for (let slot = 0; before !== row.roster && slot < this.players; slot++) {
      const bit = 1 << slot;
      if ((row.roster & bit) !== 0 && (before & bit) === 0 && this.game.join) state = this.game.join(state, slot, frame);
      if ((row.roster & bit) === 0 && (before & bit) !== 0 && this.game.leave) state = this.game.leave(state, slot, frame);
    }
    this.current = this.game.step(state, row.inputs, frame);
    this.states.set(frame, { state: this.current, roster: row.roster });
  }

  private settle(): void {
    while (this.syncFrame < this.frame && this.confirmed.has(this.syncFrame + 1) && this.dirtyFrom > this.syncFrame + 1) {
      const f = ++this.syncFrame;
      const { state, roster } = this.states.get(f)!;
      const row = this.confirmed.get(f)!.inputs;
      const hash = this.game.hash ? this.game.hash(state) >>> 0 : hashBytes(this.game.serialize(state));
      this.hashLog.record(f, hash);
      this.states.delete(f - 1);
      this.used.delete(f);
      this.confirmed.delete(f);
      this.local.delete(f);
      this.onConfirm(f, row, state, hash, roster);
    }
  }

  /** States held now (for the bound's tests). */
  get heldStates(): number {
    return this.states.size;
  }
}
