import type { InputCodec } from '../wire/input-codec.js';
import { MAX_LOCKSTEP_WINDOW } from '../wire/lockstep-packets.js';

/** Confirmed frames the host keeps to resend to a client that lost them: 10 s at 60 Hz. */
export const REFEREE_HISTORY = 600;

/**
 * The host's ruling on input frames. Players send inputs stamped with the
 * frame they are for; the referee takes the first it gets for each (frame,
 * player) and confirms a frame either when everyone's input is in or when
 * the host's deadline passes, and then a missing input is that player's
 * last one. A confirmed frame never changes, so every peer runs the same
 * inputs whatever arrived where and when.
 */
export class InputReferee<I> {
  /** The newest confirmed frame. */
  confirmedFrame = 0;
  /** Per slot, inputs the referee had to fill in because the player's came late or never. */
  readonly filled: number[];
  /** The seats taken at confirmedFrame (bit = slot). */
  roster: number;
  private readonly pending = new Map<number, (I | undefined)[]>();
  private readonly rows = new Map<number, { inputs: I[]; roster: number }>();
  private last: I[];
  /** Per slot, the newest frame up to which the player's input is in or no longer needed. */
  private readonly acked: number[];
  /** Seat changes not yet confirmed, by the frame they happen in. */
  private readonly changes = new Map<number, { slot: number; on: boolean }[]>();
  /** Per slot, true from a join until its player's first input: a newcomer cannot be late for frames it never knew of. */
  private readonly newcomer: boolean[];

  constructor(
    private readonly codec: InputCodec<I>,
    readonly players: number,
    /** Frames 1..inputDelay are neutral for everyone: no one can have sent an input for them. */
    readonly inputDelay: number,
    /** The seats taken at the start (default: all). */
    roster = (1 << players) - 1,
  ) {
    this.last = Array.from({ length: players }, () => codec.neutral);
    this.filled = Array.from({ length: players }, () => 0);
    this.acked = Array.from({ length: players }, () => inputDelay);
    this.newcomer = Array.from({ length: players }, () => false);
    this.roster = roster;
  }

  /** Whether `slot` plays in `frame` (a seat change may be scheduled before it). */
  present(slot: number, frame: number): boolean {
    let mask = this.roster;
    for (const [f, list] of this.changes) if (f <= frame) for (const c of list) mask = c.on ? mask | (1 << c.slot) : mask & ~(1 << c.slot);
    return (mask & (1 << slot)) !== 0;
  }

  /**
   * Seats or unseats a player at the next frame to be confirmed, and
   * returns that frame. The change is part of the confirmed frame, so every
   * peer applies it there.
   */
  seat(slot: number, on: boolean): number {
    const frame = this.confirmedFrame + 1;
    const list = this.changes.get(frame) ?? [];
    list.push({ slot, on });
    this.changes.set(frame, list);
    if (on) {
      this.newcomer[slot] = true;
      this.acked[slot] = frame - 1;
    }
    return frame;
  }

  /**
   * A player's input for a frame. Ignored when the frame is already
   * confirmed (a resend, or too late), a neutral delay frame, or further
   * ahead than any honest player runs: a client cannot grow the table.
   */
  submit(slot: number, frame: number, input: I): void {
    if (slot < 0 || slot >= this.players || frame <= this.confirmedFrame || frame <= this.inputDelay) return;
    if (frame > this.confirmedFrame + MAX_LOCKSTEP_WINDOW || !this.present(slot, frame)) return;
    this.newcomer[slot] = false;
    let row = this.pending.get(frame);
    if (!row) {
      row = new Array<I | undefined>(this.players).fill(undefined);
      this.pending.set(frame, row);
    }
    row[slot] ??= input;
    this.advanceAck(slot);
  }

  /** Whether every player's input for the next frame is in. */
  nextReady(): boolean {
    const next = this.confirmedFrame + 1;
    if (next <= this.inputDelay) return true;
    const row = this.pending.get(next);
    // An empty seat, or a newcomer who has sent nothing yet, is not waited for.
    return this.last.every((_, slot) => row?.[slot] !== undefined || this.newcomer[slot] || !this.present(slot, next));
  }

  /** Confirms the next frame with what is in: a missing input repeats the player's last. */
  confirmNext(): I[] {
    const frame = ++this.confirmedFrame;
    const got = this.pending.get(frame);
    this.pending.delete(frame);
    for (const c of this.changes.get(frame) ?? []) this.roster = c.on ? this.roster | (1 << c.slot) : this.roster & ~(1 << c.slot);
    this.changes.delete(frame);
    const row = this.last.map((prev, slot) => {
      if ((this.roster & (1 << slot)) === 0) return this.codec.neutral; // an empty seat
      const input = got?.[slot];
      if (input !== undefined) return input;
      if (frame > this.inputDelay && !this.newcomer[slot]) this.filled[slot]!++;
      return frame > this.inputDelay ? prev : this.codec.neutral;
    });
    this.last = row;
    this.rows.set(frame, { inputs: row, roster: this.roster });
    this.rows.delete(frame - REFEREE_HISTORY);
    for (let s = 0; s < this.players; s++) this.advanceAck(s);
    return row;
  }

  /** The newest frame up to which a player's input is in or confirmed without it: what we acknowledge. */
  ackFor(slot: number): number {
    return this.acked[slot] ?? 0;
  }

  /** Confirmed frames from `first`, at most `max`; null when `first` is older than the history kept. */
  rowsFrom(first: number, max: number): { firstFrame: number; rows: I[][]; roster: number[] } | null {
    if (first <= this.confirmedFrame - REFEREE_HISTORY) return null;
    const rows: I[][] = [];
    const roster: number[] = [];
    for (let f = first; f <= this.confirmedFrame && rows.length < max; f++) {
      const r = this.rows.get(f)!;
      rows.push(r.inputs);
      roster.push(r.roster);
    }
    return { firstFrame: first, rows, roster };
  }

  /** Frames with inputs waiting (bounded by the window). */
  get pendingFrames(): number {
    return this.pending.size;
  }

  private advanceAck(slot: number): void {
    let a = this.acked[slot]!;
    while (a + 1 <= this.confirmedFrame || this.pending.get(a + 1)?.[slot] !== undefined) a++;
    this.acked[slot] = a;
  }
}
