/** How long the host must have held inputs in reserve before we slow down, ms. */
const WINDOW_MS = 2000;
/** Inputs in reserve, at the least, that count as too many. */
const TOO_MANY = 3;
const SLOWER = 0.97;

/**
 * Keeps a client's inputs arriving a little ahead of the host's need for
 * them. A late input makes the host repeat the previous one, which by itself
 * leaves the client one tick further ahead from then on; so the client never
 * needs to speed up. It slows down by 3 % when the host has held at least 3
 * of its inputs in reserve throughout the last 2 s (each snapshot reports the
 * fewest it held), and runs at nominal speed otherwise.
 */
export class InputLead {
  private readonly slack: { at: number; slack: number }[] = [];
  private scale = 1;

  /** Our tick rate relative to nominal. */
  get timeScale(): number {
    return this.scale;
  }

  /** Feeds the inputSlack of a snapshot received at `now`. */
  update(now: number, slack: number): void {
    this.slack.push({ at: now, slack });
    while (this.slack.length > 0 && this.slack[0]!.at < now - WINDOW_MS) this.slack.shift();
    const full = this.slack[0] !== undefined && this.slack[0].at <= now - WINDOW_MS * 0.9;
    const least = Math.min(...this.slack.map((s) => s.slack));
    this.scale = full && least >= TOO_MANY ? SLOWER : 1;
  }
}
