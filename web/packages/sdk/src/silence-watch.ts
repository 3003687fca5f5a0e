/** The clock a HostSilenceWatch looks at: the page's by default, a simulated one in tests. */
export interface WatchClock {
  now(): number;
  /** Calls fn every periodMs until the returned function is called. */
  every(periodMs: number, fn: () => void): () => void;
}

const pageClock: WatchClock = {
  now: () => Date.now(),
  every: (periodMs, fn) => {
    const id = setInterval(fn, periodMs);
    return () => clearInterval(id);
  },
};

/**
 * A client's watch on its host (docs/protocol.md, Frozen hosts): once it has
 * heard from the host, `report` is called when nothing more came for
 * `limitMs`, and again every `limitMs` while the silence lasts. It looks
 * three times per period, so a report is at most a third of it late (more
 * in a hidden tab, whose timers run at 1 Hz). RoomSession runs one per
 * client; the netcode's freeze simulation runs the same on simulated time.
 */
export class HostSilenceWatch {
  private heardAt: number | null = null;
  private reportedAt = -Infinity;
  private stopTimer: (() => void) | null = null;

  constructor(
    private readonly limitMs: number,
    private readonly report: (silentMs: number) => void,
    private readonly clock: WatchClock = pageClock,
  ) {
    if (!(limitMs > 0)) throw new RangeError(`HostSilenceWatch: limitMs must be above 0, not ${limitMs}`);
  }

  /** Something came from the host: the watch starts (the first time) or starts over. */
  heard(): void {
    this.heardAt = this.clock.now();
    this.stopTimer ??= this.clock.every(this.limitMs / 3, () => this.look());
  }

  /** The room has a new host: a watch that was running gives it a full period from now. */
  hostChanged(): void {
    if (this.heardAt !== null) this.heardAt = this.clock.now();
  }

  /** Stops watching until the host is heard again. */
  stop(): void {
    this.stopTimer?.();
    this.stopTimer = null;
    this.heardAt = null;
  }

  private look(): void {
    if (this.heardAt === null) return;
    const now = this.clock.now();
    const silentMs = now - this.heardAt;
    if (silentMs < this.limitMs || now - this.reportedAt < this.limitMs) return;
    this.reportedAt = now;
    this.report(silentMs);
  }
}
