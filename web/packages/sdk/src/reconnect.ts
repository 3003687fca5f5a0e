/**
 * When to try a dropped connection again: the delay before attempt `attempt`
 * (1 for the first retry), or null to give up.
 */
export interface ReconnectPolicy {
  nextRetryDelayMs(attempt: number): number | null;
}

export interface BackoffOptions {
  /** Delay before the first retry (ms; default 500). */
  initialMs?: number;
  /** Largest delay (ms; default 10 s). */
  maxMs?: number;
  /** Each delay is this many times the last (default 2). */
  factor?: number;
  /** Give up after this many attempts (default: never). */
  maxAttempts?: number;
  /** Spread each delay by up to ±this fraction, so a server restart is not met by every tab at once (default 0.2). */
  jitter?: number;
  /** Random source in [0, 1); tests fix it. */
  random?: () => number;
}

/** Exponential backoff with jitter. */
export function backoff(options: BackoffOptions = {}): ReconnectPolicy {
  const { initialMs = 500, maxMs = 10_000, factor = 2, maxAttempts = Infinity, jitter = 0.2 } = options;
  const random = options.random ?? Math.random;
  return {
    nextRetryDelayMs(attempt) {
      if (attempt > maxAttempts) return null;
      const base = Math.min(maxMs, initialMs * factor ** Math.max(0, attempt - 1));
      return Math.round(base * (1 + jitter * (2 * random() - 1)));
    },
  };
}
