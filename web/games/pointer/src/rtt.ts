/** Keeps the last `size` round-trip samples and reports their median. */
export class RttWindow {
  private readonly samples: number[] = [];

  constructor(private readonly size = 64) {}

  add(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.samples.push(ms);
    if (this.samples.length > this.size) this.samples.shift();
  }

  median(): number | null {
    if (this.samples.length === 0) return null;
    const sorted = [...this.samples].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    const hi = sorted[mid] ?? 0;
    return sorted.length % 2 === 1 ? hi : ((sorted[mid - 1] ?? hi) + hi) / 2;
  }
}
