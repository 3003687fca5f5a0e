import type { NetPlayer } from '../game.js';
import { JitterMeter, LossMeter, RateMeter, RttMeter, type NetStats } from '../stats.js';
import type { InputPacket } from '../wire/packets.js';
import { InputQueue, type NextInput } from './input-queue.js';

/** The host's per-client figures. */
export interface HostPeerStats extends NetStats {
  inputsApplied: number;
  stickyTicks: number;
  /** Inputs received more than once (redundancy doing its job). */
  duplicateInputs: number;
  /** Inputs refused for being too far ahead. */
  overflowInputs: number;
  queueDepth: number;
  badPackets: number;
}

/** Inputs a new client must have queued before its first is applied (50 ms at 60 Hz). */
const INPUT_PREFILL = 3;
/** View ticks remembered per input: the newest few of each packet are enough. */
const VIEW_TICKS_PER_PACKET = 8;

/**
 * Everything the host keeps about one client: its input queue, what it has
 * acknowledged, the timing of its packets and the meters behind its stats.
 */
export class RemotePeer<I> {
  readonly queue: InputQueue<I>;
  /** The newest snapshot tick the client holds: its delta baseline. */
  ackTick = 0;
  /** The host tick the client was drawing when it sent the input applied last (null before any). */
  viewTick: number | null = null;
  badPackets = 0;
  /**
   * False for a player handed over from the previous host whose link to us
   * has not opened yet: it keeps its slot and its entity, sends nothing and
   * is sent nothing.
   */
  connected = true;
  private minSlack = Infinity;
  private newestPacket: number | null = null;
  private echo: { sentAt: number; receivedAt: number } | null = null;
  private readonly viewBySeq = new Map<number, number>();
  private readonly loss = new LossMeter();
  private readonly jitter = new JitterMeter();
  private readonly rtt = new RttMeter();
  private readonly bytesIn = new RateMeter();
  private readonly bytesOut = new RateMeter();
  private readonly packetsIn = new RateMeter();
  private readonly packetsOut = new RateMeter();
  private readonly snapshots = new RateMeter();

  constructor(
    readonly player: NetPlayer,
    neutral: I,
    tickRate: number,
  ) {
    // Two seconds of inputs may wait: more would let a client bank a speed-up.
    this.queue = new InputQueue(neutral, 2 * tickRate, INPUT_PREFILL);
  }

  /** Counts a packet that arrived, whatever it turns out to be. */
  arrived(now: number, bytes: number): void {
    this.bytesIn.add(now, bytes);
    this.packetsIn.add(now);
  }

  /**
   * Takes a decoded input packet. `sentAt(tick)` tells when a snapshot went
   * out, to time its acknowledgement. Returns false for a duplicate packet.
   */
  receive(packet: InputPacket<I>, now: number, currentTick: number, sentAt: (tick: number) => number | undefined): boolean {
    if (!this.loss.add(packet.packetSeq)) return false;
    this.jitter.add(packet.sentAt, now);
    if (this.newestPacket === null || ((packet.packetSeq - this.newestPacket) & 0xffff) < 0x8000) {
      this.newestPacket = packet.packetSeq;
      this.echo = { sentAt: packet.sentAt, receivedAt: now };
    }
    if (packet.ackTick > this.ackTick && packet.ackTick <= currentTick) {
      const sent = sentAt(packet.ackTick);
      if (sent !== undefined) this.rtt.add(now - sent);
      this.ackTick = packet.ackTick;
    }
    this.queue.receive(packet.firstSeq, packet.inputs);
    if (packet.viewTick16 > 0 && packet.inputs.length > 0) {
      // The view tick belongs to the newest input; older ones were sent a tick apart.
      const lastSeq = packet.firstSeq + packet.inputs.length - 1;
      for (let k = 0; k < Math.min(packet.inputs.length, VIEW_TICKS_PER_PACKET); k++) {
        const seq = lastSeq - k;
        if (seq > this.queue.lastApplied && !this.viewBySeq.has(seq)) this.viewBySeq.set(seq, packet.viewTick16 / 16 - k);
      }
    }
    return true;
  }

  /** This tick's input: the next sequence exactly once, or a repeat of the last. */
  next(): NextInput<I> {
    const next = this.queue.next();
    if (next.seq !== null) {
      this.viewTick = this.viewBySeq.get(next.seq) ?? this.viewTick;
      this.viewBySeq.delete(next.seq);
      if (this.viewBySeq.size > 64) for (const s of this.viewBySeq.keys()) if (s <= next.seq) this.viewBySeq.delete(s);
    }
    this.minSlack = Math.min(this.minSlack, next.sticky ? 0 : this.queue.depth);
    return next;
  }

  /** The fewest inputs held in reserve since the last call (what the snapshot reports). */
  takeSlack(): number {
    const slack = this.minSlack === Infinity ? this.queue.depth : this.minSlack;
    this.minSlack = Infinity;
    return slack;
  }

  /** The client's newest packet stamp and how long we have held it, for its RTT. */
  echoAt(now: number): { sentAt: number; holdMs: number } | null {
    return this.echo ? { sentAt: this.echo.sentAt, holdMs: now - this.echo.receivedAt } : null;
  }

  get lossIn(): number {
    return this.loss.loss();
  }

  sentSnapshot(now: number, bytes: number): void {
    this.bytesOut.add(now, bytes);
    this.packetsOut.add(now);
    this.snapshots.add(now);
  }

  stats(now: number): HostPeerStats {
    const q = this.queue.stats;
    return {
      rttMs: this.rtt.ms,
      jitterMs: this.jitter.ms,
      lossIn: this.loss.loss(),
      lossOut: 0,
      bytesInPerSec: this.bytesIn.perSecond(now),
      bytesOutPerSec: this.bytesOut.perSecond(now),
      packetsInPerSec: this.packetsIn.perSecond(now),
      packetsOutPerSec: this.packetsOut.perSecond(now),
      snapshotRate: this.snapshots.perSecond(now),
      inputsApplied: q.applied,
      stickyTicks: q.sticky,
      duplicateInputs: q.duplicates,
      overflowInputs: q.overflow,
      queueDepth: this.queue.depth,
      badPackets: this.badPackets,
    };
  }
}
