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
  encodeStateChunks,
  LockstepPacketType,
  MAX_FRAMES_PER_PACKET,
  MAX_LOCKSTEP_PLAYERS,
  MAX_LOCKSTEP_WINDOW,
  MAX_STATE_BYTES,
  StateAssembler,
  type LockstepMode,
  type RefusedCode,
  type ResyncHeader,
  type ResyncReason,
} from '../wire/lockstep-packets.js';
import { encodeEvent, PacketType } from '../wire/packets.js';
import { hashBytes, type HashLog } from '../wire/state-hash.js';
import type { DeterministicGame } from './game.js';
import { InputReferee } from './referee.js';
import { Timeline } from './timeline.js';

export const DEFAULT_INPUT_DELAY = 2;
export const DEFAULT_MAX_ROLLBACK = 10;
export const DEFAULT_LOCKSTEP_BUFFER = 2;
export const DEFAULT_STALL_TIMEOUT_MS = 3000;
/** The largest state a host sends or a client takes in a resync, unless a session says otherwise (64 KiB: 4 chunks). */
export const DEFAULT_MAX_STATE_BYTES = 64 * 1024;
/** Least time between two resyncs of one client, so a peer asking again and again costs the host one state a second. */
export const RESYNC_INTERVAL_MS = 1000;

const REFUSALS: Readonly<Record<RefusedCode, string>> = {
  full: 'netcode: the match is full: every seat is taken',
  no_resync: 'netcode: the match is under way and this game cannot send its state (no deserialize)',
  state_too_large: "netcode: the host's state is over the resync size limit",
};

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
  /**
   * A running peer that makes no progress this long fails (default 3 s).
   * A failed client of a game with `deserialize` keeps asking the host for
   * its state, once a second, and plays on when it comes (a resume).
   */
  stallTimeoutMs?: number;
  /**
   * The largest serialized state sent (host) or taken (client) in a resync
   * (default 64 KiB, at most MAX_STATE_BYTES = 1 MiB). Over it the host
   * refuses to seat a newcomer ('state_too_large'); a client refuses a
   * bigger state and fails.
   */
  maxStateBytes?: number;
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
  /** Desyncs seen: on the host any peer's, on a client its own (as the host told it). */
  desyncs: number;
  /** States sent (host) or taken (client) to join, resume, heal a desync or switch mode. */
  resyncs: number;
  /** Desyncs healed: on the host, the peer's hashes matched again after its resync; on a client, it played on from the host's state. */
  healed: number;
  /** The last desync-to-healed time in ms: host, detected to matching again; client, told to playing on from the host's state (0: none yet). */
  lastHealMs: number;
}

/** A state sent or taken at a frame boundary. */
export interface Resync {
  reason: ResyncReason;
  /** The peer's slot (on a client, its own). */
  slot: number;
  /** The frame the state is after. */
  frame: number;
  /** Size of the serialized state. */
  bytes: number;
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
  /** The run cannot go on: the reason says why. A client may play on after a resync. */
  failed: [reason: string];
  /** A state was sent (host, per client) or taken (client) at a frame boundary: a join, a resume, a desync heal or a mode switch. */
  resync: [resync: Resync];
  /** Host: a diverged peer's hashes match again after its resync. */
  healed: [heal: { slot: number; frame: number; ms: number }];
  /** A seat was taken (a join or a resume) or emptied (a leave) in this confirmed frame, on every peer alike. */
  seat: [slot: number, taken: boolean, frame: number];
  /** The match changed mode (the host switched it) from this frame on. */
  mode: [mode: LockstepMode, frame: number];
}

interface ClientLink {
  id: string;
  slot: number;
  /** Counts resyncs sent to this client; its packets carry the one they belong to. */
  epoch: number;
  resyncAt: number;
  /** When the desync being healed was found, and the frame of the state sent to heal it. */
  desyncAt: number;
  healFrame: number;
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
  // Seats, resyncs and heals.
  /** Host: the seat each player held, so one who comes back gets it again. */
  private readonly seatOf = new Map<string, number>();
  private readonly assembler = new StateAssembler();
  private incoming: ResyncHeader | null = null;
  /** Client: the resync our packets belong to. */
  private epoch = 0;
  /** Client: run a few frames a tick after a resync until level with the host. */
  private catchUp = false;
  /** Client: a stall failure is worth asking the host for its state; a refusal is not. */
  private canResume = false;
  private helloAt = -Infinity;
  private desyncAt = -1;
  private desyncCount = 0;
  private resyncCount = 0;
  private healedCount = 0;
  private lastHeal = 0;
  private readonly maxStateBytes: number;
  /** Seats taken at the newest confirmed frame here (bit = slot). */
  private seats = 0;

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
    this.maxStateBytes = options.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES;
    if (!Number.isInteger(this.maxStateBytes) || this.maxStateBytes < 0 || this.maxStateBytes > MAX_STATE_BYTES) throw new RangeError(`netcode: maxStateBytes must be 0–${MAX_STATE_BYTES}`);
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

  /** Seats taken at the newest confirmed frame, by slot. */
  get roster(): readonly boolean[] {
    const mask = this.timeline?.confirmedState.roster ?? 0;
    return Array.from({ length: this.playerCount }, (_, slot) => (mask & (1 << slot)) !== 0);
  }

  /**
   * Host: changes the match between rollback and lockstep at a frame
   * boundary. Every client gets the host's state after the newest confirmed
   * frame with the new mode and restarts from it (a stop-and-restart); the
   * confirmed frames after it stand. Throws on a client, and when the state
   * is over maxStateBytes or the game has no deserialize.
   */
  switchMode(mode: LockstepMode): void {
    if (!this.isHost) throw new Error('netcode: only the host switches the mode');
    if (mode === this.modeNow) return;
    if (this.phaseNow === 'running') {
      if (!this.o.game.deserialize) throw new Error(REFUSALS.no_resync);
      const size = this.o.game.serialize(this.timeline!.confirmedState.state).length;
      if (size > this.maxStateBytes) throw new RangeError(`${REFUSALS.state_too_large} (${size} > ${this.maxStateBytes} bytes)`);
    }
    this.modeNow = mode;
    if (this.phaseNow !== 'running') return;
    for (const link of this.links.values()) this.resync(link, 'mode');
    this.events.emit('mode', mode, this.timeline!.syncFrame);
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
      t.on('peerClose', (id) => {
        if (this.isHost) this.leave(id);
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
    if (this.running && this.phaseNow === 'failed' && this.canResume && this.scheduler.now() - this.helloAt >= RESYNC_INTERVAL_MS) this.hello();
    if (!this.running || this.phaseNow !== 'running') return;
    // A rollback client keeps its frame level with the host's: one that
    // falls behind (a stall, a slow timer) would send every input later and
    // later until the host's deadline overtook them. ±5 % at most, unseen.
    const rate = !this.isHost && this.modeNow === 'rollback' ? 1 + Math.max(-0.05, Math.min(0.05, this.lag * 0.02)) : 1;
    this.ticker.update(this.scheduler.now(), () => this.tick(), rate);
    if (this.phaseNow === 'running' && this.scheduler.now() - this.lastProgressAt > (this.o.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS)) {
      this.fail(`netcode: no frame confirmed for ${this.o.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS} ms (frame ${this.frame}, confirmed ${this.confirmedFrame}, window ${this.maxRollback})`, true);
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
      desyncs: this.desyncCount,
      resyncs: this.resyncCount,
      healed: this.healedCount,
      lastHealMs: this.lastHeal,
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
    this.helloAt = this.scheduler.now();
    this.o.transport.send(this.o.transport.hostId, encodeEvent({ type: 'hello' }), 'events');
  }

  private maybeBegin(): void {
    if (this.phaseNow !== 'waiting' || this.joined.length < this.playerCount - 1) return;
    const t = this.o.transport;
    this.referee = new InputReferee(this.o.game.input, this.playerCount, this.inputDelay);
    this.joined.forEach((id, i) => {
      this.seatOf.set(id, i + 1);
      this.links.set(id, { id, slot: i + 1, epoch: 0, resyncAt: -Infinity, desyncAt: 0, healFrame: 0, ackFrame: 0, hashAck: 0, desynced: false });
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
    this.seats = (1 << this.playerCount) - 1;
    this.timeline = new Timeline(this.o.game, this.playerCount, slot, this.maxRollback, (...a) => this.confirmed(...a));
    this.phaseNow = 'running';
    this.lastProgressAt = this.scheduler.now();
    this.newestArrivalAt = this.scheduler.now();
    this.ticker = new FixedTicker(this.o.game.tickRate ?? DEFAULT_TICK_RATE);
    this.ticker.update(this.scheduler.now(), () => undefined);
    this.events.emit('start', slot, this.playerCount);
  }

  private fail(reason: string, canResume = false): void {
    this.phaseNow = 'failed';
    this.canResume = canResume && !this.isHost && this.o.game.deserialize !== undefined;
    this.events.emit('failed', reason);
  }

  /**
   * Host: a player said hello while the match runs. One we seat lost its
   * state (a cut, a stall): it gets ours again. Anyone else takes a free
   * seat, their own first if they held one, at the next frame the referee
   * confirms, and gets our state to play on from.
   */
  private seat(id: string): void {
    const link = this.links.get(id);
    if (link) {
      if (this.scheduler.now() - link.resyncAt >= RESYNC_INTERVAL_MS) this.resync(link, 'resume');
      return;
    }
    if (!this.o.game.deserialize) return this.refuse(id, 'no_resync');
    const taken = new Set([0, ...[...this.links.values()].map((l) => l.slot)]);
    const before = this.seatOf.get(id);
    let slot = before !== undefined && !taken.has(before) ? before : -1;
    for (let s = 1; slot < 0 && s < this.playerCount; s++) if (!taken.has(s)) slot = s;
    if (slot < 0) return this.refuse(id, 'full');
    const size = this.o.game.serialize(this.timeline!.confirmedState.state).length;
    if (size > this.maxStateBytes) return this.refuse(id, 'state_too_large');
    this.referee!.seat(slot, true);
    this.seatOf.set(id, slot);
    const fresh: ClientLink = { id, slot, epoch: 0, resyncAt: -Infinity, desyncAt: 0, healFrame: 0, ackFrame: 0, hashAck: 0, desynced: false };
    this.links.set(id, fresh);
    this.resync(fresh, before === slot ? 'resume' : 'join');
  }

  /** Host: a player's link closed; their seat empties at the next frame the referee confirms. */
  private leave(id: string): void {
    const waiting = this.joined.indexOf(id);
    if (this.phaseNow === 'waiting' && waiting >= 0) this.joined.splice(waiting, 1);
    const link = this.links.get(id);
    if (!link || !this.referee) return;
    this.links.delete(id);
    this.referee.seat(link.slot, false);
  }

  private refuse(id: string, code: RefusedCode): void {
    this.o.transport.send(id, encodeLockstepEvent({ type: 'refused', code }), 'events');
  }

  /**
   * Host: sends a client our state after the newest confirmed frame, a
   * frame boundary every peer agrees on, then the confirmed frames from the
   * next one as usual. Its hashes count again from there (a new epoch).
   */
  private resync(link: ClientLink, reason: ResyncReason): void {
    const tl = this.timeline!;
    const { state, roster } = tl.confirmedState;
    const bytes = this.o.game.serialize(state);
    const frame = tl.syncFrame;
    link.epoch++;
    link.ackFrame = frame;
    link.hashAck = frame;
    link.resyncAt = this.scheduler.now();
    if (link.desynced) link.healFrame = frame;
    const header: ResyncHeader = {
      type: 'resync',
      reason,
      mode: this.modeNow,
      slot: link.slot,
      players: this.playerCount,
      tickRate: this.o.game.tickRate ?? DEFAULT_TICK_RATE,
      inputDelay: this.inputDelay,
      maxRollback: this.maxRollback,
      frame,
      roster,
      epoch: link.epoch,
      size: bytes.length,
      hash: tl.hashLog.get(frame) ?? this.hashOf(state, bytes),
    };
    const t = this.o.transport;
    t.send(link.id, encodeLockstepEvent(header), 'events');
    for (const chunk of encodeStateChunks(link.epoch, bytes)) t.send(link.id, chunk, 'events');
    this.resyncCount++;
    this.events.emit('resync', { reason, slot: link.slot, frame, bytes: bytes.length });
  }

  /** A frame is final here: tell the game, and say which seats it changed. */
  private confirmed(frame: number, inputs: readonly I[], state: S, hash: number, roster: number): void {
    this.events.emit('confirm', frame, inputs, state, hash);
    const was = this.seats;
    this.seats = roster;
    for (let slot = 0; was !== roster && slot < this.playerCount; slot++) {
      const bit = 1 << slot;
      if ((was & bit) !== (roster & bit)) this.events.emit('seat', slot, (roster & bit) !== 0, frame);
    }
  }

  private hashOf(state: S, bytes: Uint8Array): number {
    return this.o.game.hash ? this.o.game.hash(state) >>> 0 : hashBytes(bytes);
  }

  /** Client: the host's state is here whole; play on from it. */
  private applyResync(h: ResyncHeader, bytes: Uint8Array): void {
    const game = this.o.game;
    if (h.tickRate !== (game.tickRate ?? DEFAULT_TICK_RATE)) return this.fail(`netcode: the host runs ${h.tickRate} frames a second, this game ${game.tickRate ?? DEFAULT_TICK_RATE}`);
    if (!game.deserialize) return this.fail(REFUSALS.no_resync);
    let state: S;
    try {
      state = game.deserialize(bytes);
    } catch (err) {
      // The host is another player's tab: its bytes may be anything the game refuses.
      return this.fail(`netcode: the host's state at frame ${h.frame} did not deserialize: ${err instanceof Error ? err.message : String(err)}`);
    }
    const hash = this.hashOf(state, game.serialize(state));
    if (hash !== h.hash) return this.fail(`netcode: the host's state at frame ${h.frame} did not rebuild here (hash ${hash} ≠ ${h.hash})`);
    const wasRunning = this.phaseNow === 'running';
    const modeChanged = h.mode !== this.modeNow;
    this.modeNow = h.mode;
    this.playerCount = h.players;
    this.inputDelay = h.inputDelay;
    this.maxRollback = h.maxRollback;
    this.slotNo = h.slot;
    this.epoch = h.epoch;
    const old = this.timeline;
    this.seats = h.roster;
    const tl = new Timeline(game, h.players, h.slot, h.maxRollback, (...a) => this.confirmed(...a), {
      frame: h.frame,
      state,
      roster: h.roster,
      ...(old ? { hashLog: old.hashLog, stats: old.stats } : {}),
    });
    this.timeline = tl;
    // What we sent for frames after the state still stands at the referee; the rest is moot.
    if (this.newestTag < h.frame) this.newestTag = h.frame;
    for (let f = this.ackInput + 1; f <= h.frame; f++) this.sent.delete(f);
    this.ackInput = Math.max(this.ackInput, h.frame);
    this.ackHash = h.frame;
    for (const [f, s] of this.sent) if (this.modeNow === 'rollback') tl.setLocalInput(f, s.input);
    const now = this.scheduler.now();
    this.playing = false;
    this.lag = 0;
    this.catchUp = this.modeNow === 'rollback';
    this.phaseNow = 'running';
    this.canResume = false;
    this.lastProgressAt = now;
    this.newestArrivalAt = now;
    this.resyncCount++;
    if (this.desyncAt >= 0) {
      this.healedCount++;
      this.lastHeal = now - this.desyncAt;
      this.desyncAt = -1;
    }
    if (!wasRunning) this.events.emit('start', h.slot, h.players);
    this.events.emit('resync', { reason: h.reason, slot: h.slot, frame: h.frame, bytes: bytes.length });
    if (modeChanged) this.events.emit('mode', h.mode, h.frame);
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
    while (ref.nextReady() || ref.confirmedFrame < deadline) {
      const row = ref.confirmNext();
      tl.confirm(ref.confirmedFrame, row, ref.roster);
    }
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
      // After a resync the state is from the host's confirmed past: run up
      // to 4 frames a tick until level with the host, so our inputs stop
      // reaching it after its deadline within a few ticks instead of seconds.
      if (this.catchUp && this.lag <= 1 && this.lag !== 0) this.catchUp = false;
      const runs = this.catchUp && this.lag > 1 ? 4 : 1;
      for (let i = 0; i < runs && tl.canAdvance(true); i++) tl.advance();
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
    const data = encodeLockstepInputs(
      this.o.game.input,
      { ackFrame: tl.newestConfirmed, firstFrame: inputs.length > 0 ? firstFrame : 0, inputs, hashFrame: hashes.length > 0 ? hashFrame : 0, hashes, epoch: this.epoch },
      this.writer,
    );
    this.o.transport.send(this.o.transport.hostId, data, 'game');
  }

  private sendFrames(): void {
    const ref = this.referee!;
    for (const [id, link] of this.links) {
      const got = ref.rowsFrom(link.ackFrame + 1, MAX_FRAMES_PER_PACKET);
      if (!got) {
        // Too far behind to catch up from frames: it gets our state instead (a game without deserialize: its stall timeout ends its run).
        if (this.o.game.deserialize && this.scheduler.now() - link.resyncAt >= RESYNC_INTERVAL_MS) this.resync(link, 'resume');
        continue;
      }
      const data = encodeLockstepFrames(
        this.o.game.input,
        this.playerCount,
        { hostFrame: this.timeline!.frame, ackInput: ref.ackFor(link.slot), ackHash: link.hashAck, firstFrame: got.rows.length > 0 ? got.firstFrame : 0, rows: got.rows, roster: got.roster },
        this.writer,
      );
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
    // A packet from before the client's last resync speaks of a state it no longer has.
    if ((p.epoch ?? 0) !== link.epoch) return;
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
      if (ours === undefined) continue;
      if (ours === hashes[i]) {
        if (link.desynced && link.healFrame > 0 && f > link.healFrame) {
          link.desynced = false;
          link.healFrame = 0;
          this.healedCount++;
          this.lastHeal = this.scheduler.now() - link.desyncAt;
          this.events.emit('healed', { slot: link.slot, frame: f, ms: this.lastHeal });
        }
        continue;
      }
      if (link.desynced) continue;
      link.desynced = true;
      link.desyncAt = this.scheduler.now();
      this.desyncCount++;
      const desync = { slot: link.slot, frame: f };
      this.events.emit('desync', desync);
      for (const id of this.links.keys()) this.o.transport.send(id, encodeLockstepEvent({ type: 'desync', ...desync }), 'events');
      // Healed the way a newcomer is seated: our state at a frame boundary, and the diverged peer plays on from it.
      if (this.o.game.deserialize) {
        this.resync(link, 'desync');
        return;
      }
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
      if (tl.confirm(p.firstFrame + i, row, p.roster?.[i])) this.newestArrivalAt = now;
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
      if (data[0] !== PacketType.Hello || data.length !== 1) return;
      if (this.phaseNow === 'running') this.seat(from);
      else if (this.phaseNow === 'waiting' && !this.joined.includes(from)) {
        if (this.joined.length >= this.playerCount - 1) return this.refuse(from, 'full');
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
    } else if (e.type === 'desync') {
      if (e.slot !== this.slotNo) return;
      this.desyncCount++;
      this.desyncAt = this.scheduler.now();
      this.events.emit('desync', { slot: e.slot, frame: e.frame });
    } else if (e.type === 'refused') {
      this.fail(REFUSALS[e.code]);
    } else {
      // A resync's header, then its chunks: a state bigger than we take fails the run, as a bad chunk does.
      try {
        let whole: Uint8Array | null;
        if (e.type === 'resync') {
          this.incoming = e;
          whole = this.assembler.begin(e.epoch, e.size, this.maxStateBytes);
        } else {
          if (!this.assembler.active) return; // the rest of a state already refused
          whole = this.assembler.add(e.epoch, e.index, e.bytes);
        }
        const h = this.incoming;
        if (whole && h) {
          this.incoming = null;
          this.applyResync(h, whole);
        }
      } catch (err) {
        if (!(err instanceof WireError)) throw err;
        this.incoming = null;
        this.fail(err.message);
      }
    }
  }
}
