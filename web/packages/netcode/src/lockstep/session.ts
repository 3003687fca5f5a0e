import { Emitter, type Unsubscribe } from '@hostrelay/sdk';
import { DEFAULT_TICK_RATE } from '../game.js';
import { FixedTicker } from '../ticker.js';
import { browserScheduler, type NetTransport, type Scheduler } from '../transport/transport.js';
import { ByteWriter, WireError } from '../wire/bytes.js';
import {
  decodeLockstepEvent,
  decodeLockstepFrames,
  decodeLockstepInputs,
  encodeLockstepEvent,
  encodeLockstepFrames,
  encodeLockstepInputs,
  LockstepPacketType,
  MAX_FRAMES_PER_PACKET,
  MAX_LOCKSTEP_PLAYERS,
  MAX_LOCKSTEP_WINDOW,
  type LockstepMode,
} from '../wire/lockstep-packets.js';
import { encodeEvent, PacketType } from '../wire/packets.js';
import type { HashLog } from '../wire/state-hash.js';
import type { DeterministicGame } from './game.js';
import { InputReferee } from './referee.js';
import { Timeline } from './timeline.js';

export const DEFAULT_INPUT_DELAY = 2;
export const DEFAULT_MAX_ROLLBACK = 10;
export const DEFAULT_LOCKSTEP_BUFFER = 2;
export const DEFAULT_STALL_TIMEOUT_MS = 3000;

export interface LockstepOptions<S, I> {
  transport: NetTransport;
  game: DeterministicGame<S, I>;
  /**
   * 'rollback': every peer runs ahead on predicted inputs and rolls back on
   * a correction. 'lockstep': the host clocks the frames and clients run
   * them as they arrive. The host's choice is the match's; a client's is ignored.
   */
  mode: LockstepMode;
  /** This peer's input, read once per frame. */
  readInput(): I;
  /** Host: players including the host; the match starts when that many are connected (default 2). */
  players?: number;
  /**
   * Host: frames between reading an input and the frame it is for (default 2).
   * In rollback it hides that much latency from rollbacks; in lockstep it is
   * the margin a client's input gets on top of the round trip.
   */
  inputDelay?: number;
  /**
   * Host: the most frames a peer runs ahead of its confirmed inputs
   * (default 10). A peer that reaches it waits; the host confirms a frame
   * without a late player's input before it would have to wait itself.
   */
  maxRollback?: number;
  /** Lockstep client: confirmed frames held before running them, against jitter (default 2). */
  bufferFrames?: number;
  /** A running peer that makes no progress this long fails (default 3 s). */
  stallTimeoutMs?: number;
  scheduler?: Scheduler;
}

export type LockstepPhase = 'waiting' | 'running' | 'failed';

export interface LockstepStats {
  mode: LockstepMode;
  /** The newest frame run (predicted in rollback). */
  frame: number;
  /** The newest frame whose state is final. */
  confirmedFrame: number;
  rollbacks: number;
  /** Rollbacks per second of frames run. */
  rollbacksPerSecond: number;
  framesResimulated: number;
  maxRollbackDepth: number;
  predictionMisses: number;
  /** Ticks this peer could not run a frame: the rollback window was full (rollback) or no frame had arrived (lockstep client). */
  stalledTicks: number;
  /** Host: inputs per slot it filled with the player's last because they came late or never. */
  lateInputs: readonly number[];
  /** Lockstep client: confirmed frames waiting to run. */
  bufferedFrames: number;
  /** Client: round trip of an input to its acknowledgement (ms; 0 until measured). */
  rttMs: number;
  /**
   * Frames between reading this peer's input and the frame it is for: the
   * host's inputDelay, or more on a rollback client whose round trip has
   * outgrown the rollback window.
   */
  inputDelay: number;
}

export interface Desync {
  /** The slot whose state differed from the host's. */
  slot: number;
  /** The first frame whose state hashes differ. */
  frame: number;
}

export interface LockstepEvents<S, I> {
  /** The match began: our slot and how many play. */
  start: [slot: number, players: number];
  /** A frame is final on this peer: the inputs it ran with, the state after it, and its hash. */
  confirm: [frame: number, inputs: readonly I[], state: S, hash: number];
  /** A peer's state diverged from the host's (on the host for any peer, on a client for itself). */
  desync: [desync: Desync];
  /** The run cannot go on: the reason says why. */
  failed: [reason: string];
}

interface ClientLink {
  slot: number;
  /** The newest frame up to which the client holds every confirmed frame. */
  ackFrame: number;
  /** The newest frame whose hash from the client was compared. */
  hashAck: number;
  desynced: boolean;
}

/**
 * A deterministic match over a room: rollback or host-clocked lockstep.
 * Host and clients create it alike; the transport says which one this is.
 * The host is the referee of input frames: clients send it their inputs
 * stamped with a frame, it confirms each frame with every player's input
 * (a late one counts as the player's last) and sends the confirmed frames
 * to everyone. Each peer hashes its state after every confirmed frame and
 * the host compares, naming the first frame that differs.
 *
 * @example
 * const session = new LockstepSession({ transport, game: duel, mode: 'rollback', readInput, players: 2 });
 * session.on('desync', ({ slot, frame }) => console.warn(`slot ${slot} diverged at frame ${frame}`));
 * session.start();
 * requestAnimationFrame(function draw() { render(session.state); requestAnimationFrame(draw); });
 */
export class LockstepSession<S, I> {
  readonly isHost: boolean;
  private readonly o: LockstepOptions<S, I>;
  private readonly events = new Emitter<LockstepEvents<S, I>>();
  private readonly scheduler: Scheduler;
  private readonly writer = new ByteWriter(512);
  private readonly offs: Unsubscribe[] = [];
  private ticker: FixedTicker;
  private modeNow: LockstepMode;
  private timeline: Timeline<S, I> | null = null;
  private referee: InputReferee<I> | null = null;
  private slotNo = -1;
  private playerCount = 0;
  private inputDelay: number;
  private maxRollback: number;
  private phaseNow: LockstepPhase = 'waiting';
  private running = false;
  private pumpTimer: (() => void) | null = null;
  private lastProgressAt = 0;
  private stalled = 0;
  // Host side.
  private readonly joined: string[] = [];
  private readonly links = new Map<string, ClientLink>();
  // Client side.
  private readonly sent = new Map<number, { input: I; at: number }>();
  private newestTag = 0;
  private ackInput = 0;
  private ackHash = 0;
  private rtt = 0;
  private newestArrivalAt = 0;
  private playing = false;
  /** Rollback client: how many frames the host is ahead of us (smoothed); we run a little faster or slower to close it. */
  private lag = 0;
  /** Rollback client: the input delay we use now (≥ the host's inputDelay; see ownDelay). */
  private delayNow = 0;

  constructor(options: LockstepOptions<S, I>) {
    this.o = options;
    this.scheduler = options.scheduler ?? browserScheduler;
    this.isHost = options.transport.localId === options.transport.hostId;
    this.modeNow = options.mode;
    this.inputDelay = options.inputDelay ?? DEFAULT_INPUT_DELAY;
    this.maxRollback = options.maxRollback ?? DEFAULT_MAX_ROLLBACK;
    const players = options.players ?? 2;
    if (!Number.isInteger(players) || players < 1 || players > MAX_LOCKSTEP_PLAYERS) throw new RangeError(`netcode: players must be 1–${MAX_LOCKSTEP_PLAYERS}`);
    if (!Number.isInteger(this.inputDelay) || this.inputDelay < 0 || this.inputDelay > MAX_LOCKSTEP_WINDOW) throw new RangeError('netcode: bad inputDelay');
    if (!Number.isInteger(this.maxRollback) || this.maxRollback < 1 || this.maxRollback > MAX_LOCKSTEP_WINDOW) throw new RangeError('netcode: bad maxRollback');
    this.playerCount = players;
    this.ticker = new FixedTicker(options.game.tickRate ?? DEFAULT_TICK_RATE);
  }

  on<K extends keyof LockstepEvents<S, I>>(event: K, listener: (...args: LockstepEvents<S, I>[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  get mode(): LockstepMode {
    return this.modeNow;
  }

  get phase(): LockstepPhase {
    return this.phaseNow;
  }

  /** Our slot (0 for the host), -1 before the match starts. */
  get slot(): number {
    return this.slotNo;
  }

  get players(): number {
    return this.playerCount;
  }

  /** The newest state: predicted in rollback, the last confirmed one in lockstep. */
  get state(): S | null {
    return this.timeline?.state ?? null;
  }

  /** The newest frame run. */
  get frame(): number {
    return this.timeline?.frame ?? 0;
  }

  /** The newest frame whose state is final here. */
  get confirmedFrame(): number {
    return this.timeline?.syncFrame ?? 0;
  }

  /** The hash of the state after each confirmed frame (the last 4096). */
  get hashLog(): HashLog | null {
    return this.timeline?.hashLog ?? null;
  }

  /** Starts listening and ticking. The host starts the match when every player is connected. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const t = this.o.transport;
    this.offs.push(
      t.on('message', (id, data, channel) => (channel === 'game' ? this.onGame(id, data) : this.onEvent(id, data))),
      t.on('peerOpen', (id) => {
        if (!this.isHost && id === t.hostId) this.hello();
      }),
    );
    if (!this.isHost && t.peers().includes(t.hostId)) this.hello();
    if (this.isHost) this.maybeBegin();
    const pump = (): void => {
      if (!this.running) return;
      this.update();
      this.pumpTimer = this.scheduler.schedule(pump, this.ticker.stepMs / 2);
    };
    this.ticker.update(this.scheduler.now(), () => undefined);
    pump();
  }

  /** Runs the frames due by now; start() calls it on a timer. */
  update(): void {
    if (!this.running || this.phaseNow !== 'running') return;
    // A rollback client keeps its frame level with the host's: one that
    // falls behind (a stall, a slow timer) would send every input later and
    // later until the host's deadline overtook them. ±5 % at most, unseen.
    const rate = !this.isHost && this.modeNow === 'rollback' ? 1 + Math.max(-0.05, Math.min(0.05, this.lag * 0.02)) : 1;
    this.ticker.update(this.scheduler.now(), () => this.tick(), rate);
    if (this.phaseNow === 'running' && this.scheduler.now() - this.lastProgressAt > (this.o.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS)) {
      this.fail(`netcode: no frame confirmed for ${this.o.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS} ms (frame ${this.frame}, confirmed ${this.confirmedFrame}, window ${this.maxRollback})`);
    }
  }

  stop(): void {
    this.running = false;
    this.pumpTimer?.();
    for (const off of this.offs.splice(0)) off();
  }

  stats(): LockstepStats {
    const tl = this.timeline;
    const s = tl?.stats ?? { rollbacks: 0, framesResimulated: 0, maxRollbackDepth: 0, predictionMisses: 0 };
    const seconds = (tl?.frame ?? 0) / (this.o.game.tickRate ?? DEFAULT_TICK_RATE);
    return {
      mode: this.modeNow,
      frame: tl?.frame ?? 0,
      confirmedFrame: tl?.syncFrame ?? 0,
      ...s,
      rollbacksPerSecond: seconds > 0 ? s.rollbacks / seconds : 0,
      stalledTicks: this.stalled,
      lateInputs: this.referee ? [...this.referee.filled] : [],
      bufferedFrames: tl ? tl.newestConfirmed - tl.frame : 0,
      rttMs: this.rtt,
      inputDelay: !this.isHost && this.modeNow === 'rollback' ? Math.max(this.delayNow, this.inputDelay) : this.inputDelay,
    };
  }

  /**
   * A rollback client's input delay. Our input for frame n is read at frame
   * n − delay and our state at n is final a round trip later, so running
   * level with the host needs a window of about rtt − delay frames. Past
   * that (a 10-frame window with 2 of delay covers ~180 ms), the window
   * fills, the client stalls until it sits behind the host by the excess,
   * and from then on every input it sends reaches the host after the
   * deadline: in the browser duel at 100 ms each way the host filled 295 of
   * 328 frames. Raising our own delay by the excess keeps the inputs on time
   * and the window open; the cost is that much more latency on our own
   * input only. The host accepts any frame ahead, so nothing else changes.
   */
  private ownDelay(): number {
    const margin = 3; // a timer turn each way, and one for jitter or a lost packet
    const want = Math.min(MAX_FRAMES_PER_PACKET / 2, Math.max(this.inputDelay, Math.ceil(this.rtt / this.ticker.stepMs) + margin - this.maxRollback));
    // Up at once; down only by a clear margin, so a round trip hovering at a
    // boundary does not switch it (each step down skips an input read).
    if (want > this.delayNow || want < this.delayNow - 1) this.delayNow = want;
    return this.delayNow;
  }

  private hello(): void {
    this.o.transport.send(this.o.transport.hostId, encodeEvent({ type: 'hello' }), 'events');
  }

  private maybeBegin(): void {
    if (this.phaseNow !== 'waiting' || this.joined.length < this.playerCount - 1) return;
    const t = this.o.transport;
    this.referee = new InputReferee(this.o.game.input, this.playerCount, this.inputDelay);
    this.joined.forEach((id, i) => {
      this.links.set(id, { slot: i + 1, ackFrame: 0, hashAck: 0, desynced: false });
      t.send(
        id,
        encodeLockstepEvent({
          type: 'start',
          mode: this.modeNow,
          slot: i + 1,
          players: this.playerCount,
          tickRate: this.o.game.tickRate ?? DEFAULT_TICK_RATE,
          inputDelay: this.inputDelay,
          maxRollback: this.maxRollback,
        }),
        'events',
      );
    });
    this.begin(0);
  }

  private begin(slot: number): void {
    this.slotNo = slot;
    this.timeline = new Timeline(this.o.game, this.playerCount, slot, this.maxRollback, (f, inputs, state, hash) =>
      this.events.emit('confirm', f, inputs, state, hash),
    );
    this.phaseNow = 'running';
    this.lastProgressAt = this.scheduler.now();
    this.newestArrivalAt = this.scheduler.now();
    this.ticker = new FixedTicker(this.o.game.tickRate ?? DEFAULT_TICK_RATE);
    this.ticker.update(this.scheduler.now(), () => undefined);
    this.events.emit('start', slot, this.playerCount);
  }

  private fail(reason: string): void {
    this.phaseNow = 'failed';
    this.events.emit('failed', reason);
  }

  private tick(): void {
    if (this.phaseNow !== 'running') return;
    if (this.isHost) this.hostTick();
    else this.clientTick();
  }

  private hostTick(): void {
    const tl = this.timeline!;
    const ref = this.referee!;
    const next = tl.frame + 1;
    const input = this.o.readInput();
    tl.setLocalInput(next + this.inputDelay, input);
    ref.submit(0, next + this.inputDelay, input);
    // Lockstep: the host's clock confirms each frame as it runs it. Rollback:
    // a frame is confirmed once every input is in, or when the host would
    // otherwise run out of window and have to wait for a late player.
    const deadline = this.modeNow === 'lockstep' ? next : next - (this.maxRollback - 1);
    while (ref.nextReady() || ref.confirmedFrame < deadline) tl.confirm(ref.confirmedFrame + 1, ref.confirmNext());
    tl.reconcile();
    tl.advance();
    this.lastProgressAt = this.scheduler.now();
    this.sendFrames();
  }

  private clientTick(): void {
    const tl = this.timeline!;
    const now = this.scheduler.now();
    const stepMs = this.ticker.stepMs;
    // The frame our input is for: our own frame plus the delay in rollback;
    // in lockstep the frame the host will be at when it arrives, plus the delay as margin.
    const tag =
      this.modeNow === 'rollback'
        ? tl.frame + 1 + this.ownDelay()
        : tl.newestConfirmed + Math.ceil((this.rtt + (now - this.newestArrivalAt)) / stepMs) + this.inputDelay;
    if (tag > this.newestTag) {
      const input = this.o.readInput();
      for (let f = Math.max(this.newestTag + 1, tag - MAX_FRAMES_PER_PACKET + 1, this.inputDelay + 1); f <= tag; f++) {
        this.sent.set(f, { input, at: now });
        if (this.modeNow === 'rollback') tl.setLocalInput(f, input);
      }
      this.newestTag = tag;
    }
    tl.reconcile();
    const before = tl.frame;
    if (this.modeNow === 'rollback') {
      if (tl.canAdvance(true)) tl.advance();
    } else {
      const buffered = tl.newestConfirmed - tl.frame;
      if (!this.playing && buffered >= (this.o.bufferFrames ?? DEFAULT_LOCKSTEP_BUFFER)) this.playing = true;
      if (this.playing) {
        // Run as frames come, one a tick; two when the buffer has grown past twice its size, to catch up.
        const runs = buffered > 2 * (this.o.bufferFrames ?? DEFAULT_LOCKSTEP_BUFFER) + 1 ? 2 : 1;
        for (let i = 0; i < runs && tl.canAdvance(false); i++) tl.advance();
      }
    }
    if (tl.frame > before) this.lastProgressAt = now;
    else this.stalled++;
    this.sendInputs();
  }

  private sendInputs(): void {
    const tl = this.timeline!;
    const inputs: I[] = [];
    const firstFrame = this.ackInput + 1;
    for (let f = firstFrame; f <= this.newestTag && inputs.length < MAX_FRAMES_PER_PACKET; f++) {
      const s = this.sent.get(f);
      if (!s) break;
      inputs.push(s.input);
    }
    const hashes: number[] = [];
    let hashFrame = Math.max(this.ackHash + 1, tl.syncFrame - MAX_FRAMES_PER_PACKET + 1, 1);
    for (let f = hashFrame; f <= tl.syncFrame && hashes.length < MAX_FRAMES_PER_PACKET; f++) {
      const h = tl.hashLog.get(f);
      if (h === undefined) {
        hashFrame = f + 1;
        continue;
      }
      hashes.push(h);
    }
    const data = encodeLockstepInputs(this.o.game.input, { ackFrame: tl.newestConfirmed, firstFrame: inputs.length > 0 ? firstFrame : 0, inputs, hashFrame: hashes.length > 0 ? hashFrame : 0, hashes }, this.writer);
    this.o.transport.send(this.o.transport.hostId, data, 'game');
  }

  private sendFrames(): void {
    const ref = this.referee!;
    for (const [id, link] of this.links) {
      const got = ref.rowsFrom(link.ackFrame + 1, MAX_FRAMES_PER_PACKET);
      if (!got) continue; // too far behind to catch up: that client's stall timeout ends its run
      const data = encodeLockstepFrames(this.o.game.input, this.playerCount, { hostFrame: this.timeline!.frame, ackInput: ref.ackFor(link.slot), ackHash: link.hashAck, firstFrame: got.rows.length > 0 ? got.firstFrame : 0, rows: got.rows }, this.writer);
      this.o.transport.send(id, data, 'game');
    }
  }

  private onGame(from: string, data: Uint8Array): void {
    if (this.phaseNow !== 'running') return;
    try {
      if (this.isHost && data[0] === LockstepPacketType.Inputs) this.onInputs(from, data);
      else if (!this.isHost && from === this.o.transport.hostId && data[0] === LockstepPacketType.Frames) this.onFrames(data);
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
    }
  }

  private onInputs(from: string, data: Uint8Array): void {
    const link = this.links.get(from);
    if (!link) return;
    const p = decodeLockstepInputs(this.o.game.input, data);
    const ref = this.referee!;
    p.inputs.forEach((input, i) => ref.submit(link.slot, p.firstFrame + i, input));
    link.ackFrame = Math.max(link.ackFrame, Math.min(p.ackFrame, ref.confirmedFrame));
    this.compareHashes(link, p.hashFrame, p.hashes);
  }

  /** Compares a client's hashes with ours in frame order: the first that differs is the first divergent frame. */
  private compareHashes(link: ClientLink, first: number, hashes: readonly number[]): void {
    const tl = this.timeline!;
    for (let i = 0; i < hashes.length; i++) {
      const f = first + i;
      if (f <= link.hashAck) continue;
      if (f > link.hashAck + 1 || f > tl.syncFrame) return;
      link.hashAck = f;
      const ours = tl.hashLog.get(f);
      if (ours === undefined || ours === hashes[i] || link.desynced) continue;
      link.desynced = true;
      const desync = { slot: link.slot, frame: f };
      this.events.emit('desync', desync);
      for (const id of this.links.keys()) this.o.transport.send(id, encodeLockstepEvent({ type: 'desync', ...desync }), 'events');
    }
  }

  private onFrames(data: Uint8Array): void {
    const tl = this.timeline!;
    const p = decodeLockstepFrames(this.o.game.input, this.playerCount, data);
    const now = this.scheduler.now();
    // The host's frame now is the one it sent plus half a round trip.
    const offset = p.hostFrame + this.rtt / 2 / this.ticker.stepMs - tl.frame;
    this.lag = this.lag === 0 ? offset : this.lag * 0.95 + offset * 0.05;
    p.rows.forEach((row, i) => {
      if (tl.confirm(p.firstFrame + i, row)) this.newestArrivalAt = now;
    });
    if (p.ackInput > this.ackInput) {
      const s = this.sent.get(p.ackInput);
      if (s) this.rtt = this.rtt === 0 ? now - s.at : this.rtt * 0.875 + (now - s.at) * 0.125;
      for (let f = this.ackInput + 1; f <= p.ackInput; f++) this.sent.delete(f);
      this.ackInput = p.ackInput;
    }
    this.ackHash = Math.max(this.ackHash, p.ackHash);
  }

  private onEvent(from: string, data: Uint8Array): void {
    const t = this.o.transport;
    if (this.isHost) {
      if (data[0] === PacketType.Hello && data.length === 1 && this.phaseNow === 'waiting' && !this.joined.includes(from)) {
        this.joined.push(from);
        this.maybeBegin();
      }
      return;
    }
    if (from !== t.hostId) return;
    let e;
    try {
      e = decodeLockstepEvent(data);
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      return;
    }
    if (e.type === 'start') {
      if (this.phaseNow !== 'waiting') return;
      if (e.tickRate !== (this.o.game.tickRate ?? DEFAULT_TICK_RATE)) {
        this.fail(`netcode: the host runs ${e.tickRate} frames a second, this game ${this.o.game.tickRate ?? DEFAULT_TICK_RATE}`);
        return;
      }
      this.modeNow = e.mode;
      this.playerCount = e.players;
      this.inputDelay = e.inputDelay;
      this.maxRollback = e.maxRollback;
      this.begin(e.slot);
    } else if (e.slot === this.slotNo) {
      this.events.emit('desync', { slot: e.slot, frame: e.frame });
    }
  }
}
