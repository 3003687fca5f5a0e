/**
 * A fixed-step clock (Glenn Fiedler's "Fix your timestep"): wall time goes
 * into an accumulator and comes out in whole ticks, so the simulation
 * advances the same at 30 fps, 144 fps or from a background timer. The
 * remainder is the alpha a renderer blends with.
 */
export class FixedTicker {
  readonly stepMs: number;
  private acc = 0;
  private last: number | null = null;
  private dropped = 0;

  /**
   * @param hz ticks per second
   * @param maxSteps most ticks run by one update: after a stall (a hidden
   *   tab, a debugger) the excess time is dropped instead of freezing the
   *   page while it catches up.
   */
  constructor(
    hz: number,
    private readonly maxSteps = 15,
  ) {
    if (!(hz > 0)) throw new RangeError('netcode: tick rate must be positive');
    this.stepMs = 1000 / hz;
  }

  /**
   * Runs `step` once per tick due by `now`. `rate` scales how fast ticks
   * come due (a client speeds up or slows down a few percent to keep the
   * host's input queue short). Returns how many ticks ran.
   */
  update(now: number, step: () => void, rate = 1): number {
    if (this.last === null) {
      this.last = now;
      return 0;
    }
    this.acc += Math.max(0, now - this.last) * rate;
    this.last = now;
    let n = 0;
    while (this.acc >= this.stepMs) {
      if (n === this.maxSteps) {
        this.dropped += Math.floor(this.acc / this.stepMs);
        this.acc %= this.stepMs;
        break;
      }
      this.acc -= this.stepMs;
      step();
      n++;
    }
    return n;
  }

  /** How far into the next tick we are, 0–1: for blending the last two states when drawing. */
  get alpha(): number {
    return Math.min(1, this.acc / this.stepMs);
  }

  /** Ticks skipped because an update was too far behind. */
  get droppedTicks(): number {
    return this.dropped;
  }
}
