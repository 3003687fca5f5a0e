/**
 * What the netgraph shows. The client fills all of it; the host keeps one
 * per client (from that client's packets and its own sends).
 */
export interface NetStats {
  /** Smoothed round trip, ms (null until measured). */
  rttMs: number | null;
  /** Interarrival jitter of the peer's packets (RFC 3550), ms. */
  jitterMs: number;
  /** Share of the peer's packets lost on the way here, recently (0–1). */
  lossIn: number;
  /** Share of our packets the peer saw lost, as it reports (0–1; the host does not learn it). */
  lossOut: number;
  bytesInPerSec: number;
  bytesOutPerSec: number;
  packetsInPerSec: number;
  packetsOutPerSec: number;
  /** Snapshots per second received (client) or sent to this client (host). */
  snapshotRate: number;
}

/** The client's extra figures: prediction, interpolation, input timing. */
export interface ClientStats extends NetStats {
  /** Snapshots in which our prediction for the acknowledged input was checked against the host's. */
  predictionsChecked: number;
  /** Checks that failed: reconciliations that moved the local player. */
  corrections: number;
  /** Size of the last correction that was slid in (distance over the smoothed fields; jumps are counted in snaps). */
  lastCorrection: number;
  /** Largest per-frame visible correction so far (distance). */
  maxVisibleCorrection: number;
  /** Corrections too big to smooth, shown as a jump. */
  snaps: number;
  /** Entities predicted now besides the local player (NetClientOptions.predictEntities). */
  predictedEntities: number;
  /** Snapshots that moved a predicted entity's present (one per entity). */
  entityCorrections: number;
  /** Size of the last of them that was slid in (distance over the smoothed fields). */
  lastEntityCorrection: number;
  /** Largest of them that was slid in. */
  maxEntityCorrection: number;
  /** Largest per-frame slide of a predicted entity so far (a correction, or a switch to or from interpolation). */
  maxEntityVisibleCorrection: number;
  /** Entity corrections too big to smooth, shown as a jump. */
  entitySnaps: number;
  /** How far behind the host's present remote entities are drawn, ms. */
  interpDelayMs: number;
  frames: number;
  /** Frames drawn with no snapshot at or past the render time (extrapolated or frozen). */
  dryFrames: number;
  /** Ticks the host repeated our last input because the next was late. */
  stickyTicks: number;
  /** Fewest inputs the host had queued for us recently. */
  inputSlack: number;
  /** Our tick rate relative to nominal (the input-lead controller's output). */
  timeScale: number;
  /** Snapshots whose hash disagreed with our reconstruction. */
  desyncs: number;
  /** Snapshots dropped as malformed or over a limit (more entities than the schema's maxEntities). */
  badPackets: number;
  /** Why the last of them was dropped ('' if none was). */
  lastBadPacket: string;
  /** Inputs sent and not yet applied by the host. */
  pendingInputs: number;
}

/** Events per second over a sliding window. */
export class RateMeter {
  private readonly times: number[] = [];
  private readonly amounts: number[] = [];
  private sum = 0;

  constructor(private readonly windowMs = 1000) {}

  add(now: number, amount = 1): void {
    this.times.push(now);
    this.amounts.push(amount);
    this.sum += amount;
    this.prune(now);
  }

  perSecond(now: number): number {
    this.prune(now);
    return (this.sum * 1000) / this.windowMs;
  }

  private prune(now: number): void {
    while (this.times.length > 0 && this.times[0]! <= now - this.windowMs) {
      this.times.shift();
      this.sum -= this.amounts.shift()!;
    }
  }
}

const RING = 1024;

/**
 * Loss from 16-bit packet sequence numbers: the share missing among the
 * last 256, leaving the newest few out so reordering is not counted as loss.
 */
export class LossMeter {
  private readonly seen = new Uint8Array(RING);
  private highest = -1;
  private first = -1;

  /** Records a packet; returns false for a duplicate. */
  add(seq16: number): boolean {
    const ext = this.extend(seq16);
    if (this.first < 0) this.first = ext;
    if (ext > this.highest) {
      for (let s = Math.max(this.highest + 1, ext - RING + 1); s <= ext; s++) this.seen[s % RING] = 0;
      this.highest = ext;
    } else if (ext <= this.highest - RING) {
      return false; // too old to judge
    }
    const dup = this.seen[ext % RING] === 1;
    this.seen[ext % RING] = 1;
    return !dup;
  }

  loss(): number {
    const end = this.highest - 3;
    const start = Math.max(this.first, end - 255);
    if (this.first < 0 || end < start) return 0;
    let got = 0;
    for (let s = start; s <= end; s++) got += this.seen[s % RING]!;
    return 1 - got / (end - start + 1);
  }

  private extend(seq16: number): number {
    if (this.highest < 0) return seq16;
    const base = this.highest - (this.highest % 65536);
    let best = base + seq16;
    for (const cand of [best - 65536, best + 65536]) {
      if (cand >= 0 && Math.abs(cand - this.highest) < Math.abs(best - this.highest)) best = cand;
    }
    return best;
  }
}

/** RFC 3550 interarrival jitter: the smoothed change in transit time between packets. */
export class JitterMeter {
  private lastTransit: number | null = null;
  private j = 0;

  /** Send times may be 16-bit stamps: transit differences are taken modulo 2^16. */
  add(sentMs: number, arrivedMs: number): void {
    const transit = arrivedMs - sentMs;
    if (this.lastTransit !== null) {
      const d = ((((transit - this.lastTransit) % 65536) + 98304) % 65536) - 32768;
      this.j += (Math.abs(d) - this.j) / 16;
    }
    this.lastTransit = transit;
  }

  get ms(): number {
    return this.j;
  }
}

/** Smoothed RTT the way TCP keeps it (RFC 6298's 1/8 gain). */
export class RttMeter {
  private srtt: number | null = null;

  add(sampleMs: number): void {
    if (!(sampleMs >= 0)) return;
    this.srtt = this.srtt === null ? sampleMs : this.srtt + (sampleMs - this.srtt) / 8;
  }

  get ms(): number | null {
    return this.srtt;
  }
}

/** Milliseconds as the 16-bit stamp packets carry. */
export const stamp16 = (ms: number): number => Math.floor(ms) & 0xffff;

/** Elapsed ms since a 16-bit stamp (valid for gaps under a minute). */
export const since16 = (nowMs: number, stamp: number): number => (stamp16(nowMs) - stamp) & 0xffff;
