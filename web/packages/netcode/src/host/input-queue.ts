/** What the host runs for one player in one tick. */
export interface NextInput<I> {
  input: I;
  /** The sequence applied this tick, or null when the last input was repeated (or none has come yet). */
  seq: number | null;
  /** True when the next input was late and the previous one is repeated in its place. */
  sticky: boolean;
}

/**
 * One client's inputs on the host. Each sequence number is applied exactly
 * once and in order, however often it arrives (every packet repeats the
 * unacknowledged ones) and in whatever order packets come. When the next
 * one is late the last input is repeated for that tick ("sticky input"),
 * which is what the player most likely still holds; the late input is still
 * applied, next tick, so nothing is lost.
 */
export class InputQueue<I> {
  private readonly waiting = new Map<number, I>();
  private applied = 0;
  private contiguous = 0;
  private last: I;
  private stickyRun = 0;
  private counts = { applied: 0, sticky: 0, duplicates: 0, overflow: 0 };

  /**
   * @param neutral the input used before the first one arrives
   * @param maxAhead inputs accepted beyond the last applied one (a client
   *   sending faster than the tick rate cannot bank more than this)
   * @param prefill inputs that must be waiting before the first is applied:
   *   a small cushion against jitter from the start, instead of a run of
   *   late inputs while the client's lead settles
   */
  constructor(
    neutral: I,
    private readonly maxAhead: number,
    private readonly prefill = 1,
  ) {
    this.last = neutral;
  }

  /** Takes a packet's inputs (sequences firstSeq, firstSeq+1, …). Returns how many were new. */
  receive(firstSeq: number, inputs: readonly I[]): number {
    let fresh = 0;
    for (let i = 0; i < inputs.length; i++) {
      const seq = firstSeq + i;
      if (seq <= this.applied || this.waiting.has(seq)) {
        this.counts.duplicates++;
        continue;
      }
      if (seq > this.applied + this.maxAhead) {
        this.counts.overflow++;
        continue;
      }
      this.waiting.set(seq, inputs[i]!);
      fresh++;
    }
    while (this.waiting.has(this.contiguous + 1)) this.contiguous++;
    return fresh;
  }

  /** The input for this tick: the next sequence if it is here, else the last one again. */
  next(): NextInput<I> {
    const seq = this.applied + 1;
    if (this.applied === 0 && this.contiguous < this.prefill) return { input: this.last, seq: null, sticky: false };
    const input = this.waiting.get(seq);
    if (input === undefined) {
      const started = this.applied > 0;
      if (started) {
        this.stickyRun++;
        this.counts.sticky++;
      }
      return { input: this.last, seq: null, sticky: started };
    }
    this.waiting.delete(seq);
    this.applied = seq;
    this.last = input;
    this.stickyRun = 0;
    this.counts.applied++;
    return { input, seq, sticky: false };
  }

  /** The last sequence applied (0: none yet). */
  get lastApplied(): number {
    return this.applied;
  }

  /** Ticks the last applied input has been repeated since it was applied. */
  get stickySinceApplied(): number {
    return this.stickyRun;
  }

  /** Inputs here and in order, ready for the coming ticks. */
  get depth(): number {
    return Math.max(0, this.contiguous - this.applied);
  }

  get stats(): Readonly<{ applied: number; sticky: number; duplicates: number; overflow: number }> {
    return { ...this.counts };
  }
}
