import type { Scheduler } from '../transport/transport.js';

interface Timer {
  at: number;
  order: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * Simulated time: nothing happens until advance() is called, timers fire in
 * time order (ties in the order they were set), and a 60-second match runs
 * in milliseconds of real time. Tests never sleep.
 */
export class SimClock implements Scheduler {
  private t = 0;
  private order = 0;
  private readonly heap: Timer[] = [];

  now(): number {
    return this.t;
  }

  schedule(fn: () => void, delayMs: number): () => void {
    const timer: Timer = { at: this.t + Math.max(0, delayMs), order: this.order++, fn, cancelled: false };
    this.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Calls fn every periodMs (first call after one period) until the returned function is called. */
  every(periodMs: number, fn: () => void): () => void {
    let stop = false;
    let cancel = (): void => undefined;
    const tick = (): void => {
      if (stop) return;
      fn();
      if (!stop) cancel = this.schedule(tick, periodMs);
    };
    cancel = this.schedule(tick, periodMs);
    return () => {
      stop = true;
      cancel();
    };
  }

  /** Runs every timer due within the next ms, in order, and moves the clock there. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const next = this.heap[0];
      if (!next || next.at > end) break;
      this.pop();
      if (next.cancelled) continue;
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
  }

  private less(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.order < b.order);
  }

  private push(timer: Timer): void {
    const h = this.heap;
    h.push(timer);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
