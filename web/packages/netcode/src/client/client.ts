import { Emitter, type Unsubscribe } from '@hostrelay/sdk';
import { DEFAULT_TICK_RATE, type Handover, type NetGame, type NetPlayer, type NetView } from '../game.js';
import { JitterMeter, LossMeter, RateMeter, RttMeter, since16, stamp16, type ClientStats } from '../stats.js';
import { FixedTicker } from '../ticker.js';
import { browserScheduler, type NetTransport, type Scheduler } from '../transport/transport.js';
import { ByteWriter, WireError } from '../wire/bytes.js';
import { decodeEvent, encodeEvent, encodeInputPacket, MAX_INPUTS_PER_PACKET, PacketType } from '../wire/packets.js';
import type { Entity, EntityMap, ReadonlyEntityMap } from '../wire/schema.js';
import type { HashLog } from '../wire/state-hash.js';
import { InputLead } from './input-lead.js';
import { PlayoutClock, SnapshotBuffer, type PlayoutOptions } from './interpolation.js';
import { EntityPredictor, type EntityCorrection, type PredictedEntities } from './entity-prediction.js';
import { Predictor, type Correction, type PredictStep } from './prediction.js';
import { SnapshotDecoder } from './snapshot-decoder.js';

export interface NetClientOptions<I, F extends string> {
  transport: NetTransport;
  game: NetGame<I, F>;
  /** Samples the local player's input; called once per tick. */
  readInput(): I;
  /**
   * Predicts the local player: the host's movement code for one player, one
   * tick, applied to the local entity (see localEntity). Omit to not predict.
   */
  predict?: PredictStep<I, F>;
  /**
   * The local player's entity id, from the slot the host assigned. By
   * default the slot itself: the entity the client predicts is the one
   * whose id is the player's slot (NetPlayer.slot, which the host's
   * playerJoin hands your world), so give each player's entity that id.
   */
  localEntity?: (slot: number) => number;
  /** Fields of the local entity a correction slides instead of snapping (positions). */
  smoothFields?: readonly F[];
  /** Time constant of that slide, ms (default 100). */
  smoothingMs?: number;
  /** A correction longer than this is shown as a jump (default Infinity). */
  snapDistance?: number;
  /** The slide never moves the local entity faster than this, units/s (default Infinity). */
  maxCorrectionSpeed?: number;
  /**
   * Other entities the local input moves (a ball the player pushes),
   * predicted with the local input instead of interpolated, so a push shows
   * in the frame it happens rather than a round trip later. Needs `predict`.
   * See PredictedEntities.
   */
  predictEntities?: PredictedEntities<I, F>;
  interpolation?: Omit<PlayoutOptions, 'tickRate' | 'snapshotRate'> & {
    /** Longest a remote entity is extrapolated when snapshots stop, ms (default 100). */
    maxExtrapolationMs?: number;
  };
  scheduler?: Scheduler;
}

export interface NetClientEvents {
  /** The host accepted us and gave us a slot. */
  welcome: [slot: number];
  roster: [players: readonly NetPlayer[]];
  /** A snapshot newer than any before it was applied. */
  snapshot: [tick: number];
  correction: [correction: Correction];
  /** A snapshot moved a predicted entity's present (see predictEntities). */
  entityCorrection: [correction: EntityCorrection];
  /** Our reconstruction of a snapshot hashed differently from the host's. */
  desync: [tick: number];
  kicked: [reason: string];
  /** A game event from the host over the reliable channel. */
  event: [payload: Uint8Array];
  /**
   * The old host went away and `hostId` leads the game now. If it is this
   * tab, make a NetHost from handover() and stop this client; otherwise the
   * client waits for the new host's welcome and carries on by itself.
   */
  hostChanged: [hostId: string, previousHostId: string];
}

/** One frame's worth of world to draw on a client. */
export interface ClientView<F extends string> extends NetView<F> {
  /** The (fractional) host tick remote entities are drawn at. */
  renderTick: number;
  /** Every entity: remote ones interpolated, the local one predicted and smoothed. */
  entities: ReadonlyEntityMap<F>;
  /** The local player's entity as drawn, or null before it exists. */
  local: Readonly<Entity<F>> | null;
  localId: number | null;
  /** No snapshot reached this frame's render tick: remote entities are extrapolated or frozen. */
  dry: boolean;
  /** How far smoothing of corrections moved the local player since the previous frame (over the smoothed fields). */
  visibleCorrection: number;
  /** Length of a correction shown as a jump this frame (over snapDistance), else 0. */
  snapped: number;
  /** Entities drawn predicted (predictEntities), besides the local player. */
  predicted: ReadonlySet<number>;
  /**
   * The (fractional) host tick the local player and predicted entities are
   * drawn at: the client's present, ahead of the host by about half a round
   * trip plus the input cushion (remote entities are at renderTick, behind).
   */
  predictedTick: number;
  /** Largest per-frame slide of a predicted entity (a correction, or a switch to or from interpolation). */
  entityVisibleCorrection: number;
  /** Entities (of predictEntities) still drawn off their predicted or interpolated place by a slide, and how far. */
  sliding: ReadonlyMap<number, number>;
}

/** At least this much input history rides in every packet, ms. */
const REDUNDANCY_MS = 100;

/**
 * A player's side: sends inputs every tick, predicts its own entity,
 * reconciles with the host's snapshots, and interpolates everyone else.
 *
 * @example
 * const client = new NetClient({
 *   transport: sessionTransport(session),
 *   game,
 *   readInput: () => keyboard.read(),
 *   predict: movePlayer,             // the host's movement code, shared
 *   smoothFields: ['x', 'y'],
 * });
 * client.start();
 * requestAnimationFrame(function draw() { render(client.frame().entities); requestAnimationFrame(draw); });
 */
export class NetClient<I, F extends string> {
  readonly tickRate: number;
  private readonly o: NetClientOptions<I, F>;
  private readonly events = new Emitter<NetClientEvents>();
  private readonly scheduler: Scheduler;
  private readonly ticker: FixedTicker;
  private predictor: Predictor<I, F>;
  private entityPredictor: EntityPredictor<I, F> | null;
  /** The last frame's entities: what predictEntities chooses and collides with. */
  private lastDrawn: ReadonlyEntityMap<F> = new Map();
  private decoder: SnapshotDecoder<F>;
  private lead = new InputLead();
  private readonly buffer: SnapshotBuffer<F>;
  private playout: PlayoutClock | null = null;
  /** The new host's clock, swapped in with its first snapshot so the old world stays drawn until then. */
  private nextPlayout: PlayoutClock | null = null;
  /** The newest snapshot received: what a handover continues from. */
  private newest: { tick: number; entities: ReadonlyEntityMap<F> } | null = null;
  /** What this tab knew when the host went away (handover() returns it). */
  private handedOver: Handover<F> | null = null;
  private readonly offs: Unsubscribe[] = [];
  private readonly writer = new ByteWriter(256);
  private slotNo: number | null = null;
  private roster: NetPlayer[] = [];
  private newestTick = 0;
  private packetSeq = 0;
  private ticking = false;
  private running = false;
  private kickedReason: string | null = null;
  private stopTimer: (() => void) | null = null;
  private renderTick = 0;
  private lastViewAt: number | null = null;
  private stickyTotal = 0;
  private readonly m = {
    loss: new LossMeter(),
    jitter: new JitterMeter(),
    rtt: new RttMeter(),
    bytesIn: new RateMeter(),
    bytesOut: new RateMeter(),
    packetsIn: new RateMeter(),
    packetsOut: new RateMeter(),
    snapshots: new RateMeter(),
  };
  private readonly counts = {
    corrections: 0,
    lastCorrection: 0,
    maxVisibleCorrection: 0,
    snaps: 0,
    entityCorrections: 0,
    lastEntityCorrection: 0,
    maxEntityCorrection: 0,
    maxEntityVisibleCorrection: 0,
    entitySnaps: 0,
    frames: 0,
    dryFrames: 0,
    desyncs: 0,
    lossOut: 0,
    inputSlack: 0,
    badPackets: 0,
    lastBadPacket: '',
  };

  constructor(options: NetClientOptions<I, F>) {
    this.o = options;
    this.tickRate = options.game.tickRate ?? DEFAULT_TICK_RATE;
    this.scheduler = options.scheduler ?? browserScheduler;
    this.ticker = new FixedTicker(this.tickRate);
    this.buffer = new SnapshotBuffer(options.game.schema);
    this.decoder = new SnapshotDecoder(options.game.schema, this.tickRate);
    this.predictor = this.makePredictor();
    this.entityPredictor = this.makeEntityPredictor();
  }

  private makeEntityPredictor(): EntityPredictor<I, F> | null {
    const o = this.o;
    if (!o.predictEntities || !o.predict) return null;
    return new EntityPredictor(o.game.schema, o.predictEntities, o.smoothFields ?? [], 1 / this.tickRate);
  }

  private makePredictor(): Predictor<I, F> {
    const options = this.o;
    return new Predictor({
      schema: options.game.schema,
      step: options.predict,
      dt: 1 / this.tickRate,
      smoothFields: options.smoothFields ?? [],
      smoothingMs: options.smoothingMs,
      snapDistance: options.snapDistance,
      maxCorrectionSpeed: options.maxCorrectionSpeed,
    });
  }

  on<K extends keyof NetClientEvents>(event: K, listener: (...args: NetClientEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  /** Hash of our reconstruction of each snapshot, by tick. */
  get hashLog(): HashLog {
    return this.decoder.hashLog;
  }

  /** Our slot, once the host has welcomed us. */
  get slot(): number | null {
    return this.slotNo;
  }

  get localEntityId(): number | null {
    return this.slotNo === null ? null : (this.o.localEntity ?? ((s: number) => s))(this.slotNo);
  }

  /** The players the host last told us about (the host has slot 0 if it plays). */
  get players(): readonly NetPlayer[] {
    return this.roster;
  }

  get kicked(): string | null {
    return this.kickedReason;
  }

  /** The host we have been welcomed by has sent us a snapshot: the game is live. */
  get synced(): boolean {
    return this.slotNo !== null && this.newestTick > 0 && this.nextPlayout === null;
  }

  /**
   * What a new host needs to continue the game from here: the newest
   * snapshot received, and who played in which slot. After the host went
   * away (hostChanged) it is the state as of that moment; null if this tab
   * never got a welcome and a snapshot.
   */
  handover(): Handover<F> | null {
    if (this.handedOver) return this.handedOver;
    return this.captureHandover(this.o.transport.hostId);
  }

  private captureHandover(previousHost: string): Handover<F> | null {
    const slot = this.slotNo;
    if (slot === null || this.newest === null) return null;
    const players = this.roster.filter((p) => p.id !== previousHost);
    if (!players.some((p) => p.id === this.o.transport.localId)) players.push({ id: this.o.transport.localId, slot });
    return { tick: this.newest.tick, entities: this.newest.entities, players, slot, previousHost };
  }

  /** Starts listening and ticking. Ticks (and inputs) begin once the host has welcomed us and sent a snapshot. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const t = this.o.transport;
    this.offs.push(
      t.on('message', (id, data, channel) => {
        if (id !== t.hostId) return;
        if (channel === 'game') this.onGamePacket(data);
        else this.onEvent(data);
      }),
      t.on('peerOpen', (id) => {
        if (id === t.hostId) this.hello();
      }),
      t.on('hostChanged', (hostId, previous) => this.onHostChanged(hostId, previous)),
    );
    // The channels may have opened before this game started listening, and
    // the host's welcome with them: ask for it again.
    if (t.peers().includes(t.hostId)) this.hello();
    const pump = (): void => {
      if (!this.running) return;
      this.update();
      this.stopTimer = this.scheduler.schedule(pump, this.ticker.stepMs / 2);
    };
    pump();
  }

  /** Runs the ticks due by now. start() calls it on a timer; view() calls it too. */
  update(): void {
    if (!this.running || !this.ticking) return;
    this.ticker.update(this.scheduler.now(), () => this.runTick(), this.lead.timeScale);
  }

  stop(): void {
    this.running = false;
    this.stopTimer?.();
    for (const off of this.offs.splice(0)) off();
  }

  /**
   * The old host is gone. Remember what a handover needs, stop sending
   * inputs, and wait for the new host's welcome as on joining; the last
   * world stays on screen until its first snapshot.
   */
  private onHostChanged(hostId: string, previous: string): void {
    const now = this.captureHandover(previous);
    if (now) this.handedOver = now;
    else if (this.handedOver) {
      // A second change before the first new host welcomed us: the world we
      // hold is still the newest, minus that host too.
      this.handedOver = { ...this.handedOver, players: this.handedOver.players.filter((p) => p.id !== previous) };
    }
    this.slotNo = null;
    this.ticking = false;
    // Snapshot ticks and delta baselines belong to one host.
    this.decoder = new SnapshotDecoder(this.o.game.schema, this.tickRate);
    this.events.emit('hostChanged', hostId, previous);
    if (this.running && hostId !== this.o.transport.localId && this.o.transport.peers().includes(hostId)) this.hello();
  }

  private hello(): void {
    if (this.slotNo === null) this.o.transport.send(this.o.transport.hostId, encodeEvent({ type: 'hello' }), 'events');
  }

  /** Sends a game event to the host over the reliable channel. */
  sendEvent(payload: Uint8Array): void {
    this.o.transport.send(this.o.transport.hostId, encodeEvent({ type: 'user', payload }), 'events');
  }

  /**
   * What to draw now: every entity (the local one predicted, the rest
   * interpolated) and how. Call once per rendered frame: it also counts
   * frames for the dry-buffer figure. NetHost.frame() has the same shape.
   */
  frame(): ClientView<F> {
    return this.view();
  }

  /**
   * frame() by its first name.
   *
   * @deprecated Use `frame()`, which reads the same on NetHost and NetClient.
   */
  view(): ClientView<F> {
    this.update();
    const now = this.scheduler.now();
    const frameMs = this.lastViewAt === null ? 0 : now - this.lastViewAt;
    this.lastViewAt = now;
    const localId = this.localEntityId;
    const none = new Set<number>();
    if (!this.playout) {
      return {
        renderTick: 0,
        entities: new Map(),
        local: null,
        localId,
        dry: true,
        visibleCorrection: 0,
        snapped: 0,
        predicted: none,
        predictedTick: 0,
        entityVisibleCorrection: 0,
        sliding: new Map(),
      };
    }
    this.renderTick = this.playout.renderTick(now);
    const maxExtra = ((this.o.interpolation?.maxExtrapolationMs ?? 100) * this.tickRate) / 1000;
    const sample = this.buffer.sample(this.renderTick, maxExtra);
    this.counts.frames++;
    if (sample.dry) this.counts.dryFrames++;
    const entities: EntityMap<F> = sample.entities;
    let local: Entity<F> | null = localId === null ? null : (entities.get(localId) ?? null);
    const predicted = this.o.predict ? this.predictor.render(this.ticker.alpha, frameMs) : null;
    if (predicted && localId !== null) {
      local = predicted.entity;
      entities.set(localId, local);
      this.counts.maxVisibleCorrection = Math.max(this.counts.maxVisibleCorrection, predicted.visibleCorrection);
    }
    const visibleCorrection = predicted?.visibleCorrection ?? 0;
    let snapped = predicted?.snapped ?? 0;
    let entityVisibleCorrection = 0;
    const ep = this.entityPredictor;
    if (ep) {
      const f = ep.render(this.ticker.alpha, frameMs, entities);
      entityVisibleCorrection = f.visibleCorrection;
      snapped = Math.max(snapped, f.snapped);
      this.counts.maxEntityVisibleCorrection = Math.max(this.counts.maxEntityVisibleCorrection, entityVisibleCorrection);
    }
    this.lastDrawn = entities;
    // The newest input was applied by the host at newestTick + (its sequence − the acknowledged one); drawn blended from the one before.
    const predictedTick = this.newestTick + this.predictor.pendingCount - 1 + this.ticker.alpha;
    return {
      renderTick: this.renderTick,
      entities,
      local,
      localId,
      dry: sample.dry,
      visibleCorrection,
      snapped,
      predicted: new Set(ep?.predicted ?? none),
      predictedTick,
      entityVisibleCorrection,
      sliding: ep?.sliding ?? new Map(),
    };
  }

  stats(): ClientStats {
    const now = this.scheduler.now();
    const m = this.m;
    const c = this.counts;
    return {
      rttMs: m.rtt.ms,
      jitterMs: m.jitter.ms,
      lossIn: m.loss.loss(),
      lossOut: c.lossOut,
      bytesInPerSec: m.bytesIn.perSecond(now),
      bytesOutPerSec: m.bytesOut.perSecond(now),
      packetsInPerSec: m.packetsIn.perSecond(now),
      packetsOutPerSec: m.packetsOut.perSecond(now),
      snapshotRate: m.snapshots.perSecond(now),
      predictionsChecked: this.predictor.checked,
      corrections: c.corrections,
      lastCorrection: c.lastCorrection,
      maxVisibleCorrection: c.maxVisibleCorrection,
      snaps: c.snaps,
      predictedEntities: this.entityPredictor?.predicted.size ?? 0,
      entityCorrections: c.entityCorrections,
      lastEntityCorrection: c.lastEntityCorrection,
      maxEntityCorrection: c.maxEntityCorrection,
      maxEntityVisibleCorrection: c.maxEntityVisibleCorrection,
      entitySnaps: c.entitySnaps,
      interpDelayMs: this.playout?.delayMs ?? 0,
      frames: c.frames,
      dryFrames: c.dryFrames,
      stickyTicks: this.stickyTotal,
      inputSlack: c.inputSlack,
      timeScale: this.lead.timeScale,
      desyncs: c.desyncs,
      badPackets: c.badPackets,
      lastBadPacket: c.lastBadPacket,
      pendingInputs: this.predictor.pendingCount,
    };
  }

  private runTick(): void {
    const input = this.o.readInput();
    const seq = this.predictor.advance(input);
    if (seq === null) return; // the host has stopped acknowledging: do not run away from it
    if (this.entityPredictor) {
      const steps = this.predictor.steps;
      const newest = this.newest && { ackSeq: this.predictor.lastAck, entities: this.newest.entities };
      this.entityPredictor.advance(steps[steps.length - 1]!, this.lastDrawn, newest, steps);
    }
    const atLeast = Math.ceil((REDUNDANCY_MS * this.tickRate) / 1000);
    const { firstSeq, inputs } = this.predictor.outgoing(atLeast, MAX_INPUTS_PER_PACKET);
    const now = this.scheduler.now();
    const data = encodeInputPacket(
      this.o.game.input,
      {
        packetSeq: this.packetSeq,
        ackTick: this.newestTick,
        sentAt: stamp16(now),
        viewTick16: Math.max(0, Math.round(this.renderTick * 16)),
        firstSeq,
        inputs,
      },
      this.writer,
    );
    this.packetSeq = (this.packetSeq + 1) & 0xffff;
    this.o.transport.send(this.o.transport.hostId, data, 'game');
    this.m.bytesOut.add(now, data.length);
    this.m.packetsOut.add(now);
  }

  private onEvent(data: Uint8Array): void {
    let e;
    try {
      e = decodeEvent(data);
    } catch (err) {
      if (err instanceof WireError) return;
      throw err;
    }
    switch (e.type) {
      case 'hello':
        return; // only hosts are greeted
      case 'welcome': {
        if (this.slotNo !== null) return; // a repeat, after our hello crossed it
        this.slotNo = e.slot;
        const playout = new PlayoutClock({ tickRate: this.tickRate, snapshotRate: e.snapshotRate, ...this.o.interpolation });
        if (this.playout === null) this.playout = playout;
        else this.nextPlayout = playout; // a new host: see onGamePacket
        this.events.emit('welcome', e.slot);
        return;
      }
      case 'roster':
        this.roster = e.players;
        this.events.emit('roster', this.roster);
        return;
      case 'kicked':
        this.kickedReason = e.reason;
        this.stop();
        this.events.emit('kicked', e.reason);
        return;
      case 'user':
        this.events.emit('event', e.payload);
        return;
    }
  }

  private onGamePacket(data: Uint8Array): void {
    if (data[0] !== PacketType.Snapshot || !this.playout || this.slotNo === null) return;
    const now = this.scheduler.now();
    this.m.bytesIn.add(now, data.length);
    this.m.packetsIn.add(now);
    const d = this.decoder.decode(data);
    if (d.kind === 'bad') {
      this.counts.badPackets++;
      this.counts.lastBadPacket = d.error;
    }
    if (d.kind !== 'snapshot') return;
    if (this.nextPlayout) this.restartWithNewHost(this.nextPlayout);
    const { header: h, entities } = d;
    this.m.loss.add(h.packetSeq);
    this.m.snapshots.add(now);
    this.m.jitter.add((h.tick * 1000) / this.tickRate, now);
    if (d.hashOk === false) {
      this.counts.desyncs++;
      this.events.emit('desync', h.tick);
    }
    this.buffer.insert(h.tick, entities);
    if (h.tick <= this.newestTick) return; // reordered: good for interpolation, stale for the rest
    this.newestTick = h.tick;
    this.newest = { tick: h.tick, entities };
    this.playout.onSnapshot(h.tick, now);
    if (h.echo) this.m.rtt.add(since16(now, h.echo.sentAt) - h.echo.holdMs);
    this.counts.lossOut = h.upLoss255 / 255;
    this.counts.inputSlack = h.inputSlack;
    const lateTicks = Math.max(0, h.stickyTotal - this.stickyTotal);
    this.stickyTotal = h.stickyTotal;
    this.lead.update(now, h.inputSlack);

    const localId = this.localEntityId;
    const auth = localId === null ? undefined : entities.get(localId);
    if (auth) {
      if (!this.predictor.ready) this.predictor.start(auth);
      const correction = this.predictor.reconcile(h.ackSeq, auth, lateTicks);
      if (correction) {
        this.counts.corrections++;
        if (correction.snapped) this.counts.snaps++;
        else this.counts.lastCorrection = correction.shift;
        this.events.emit('correction', correction);
      }
      for (const c of this.entityPredictor?.reconcile(h.ackSeq, entities, this.predictor.steps, this.lastDrawn) ?? []) {
        this.counts.entityCorrections++;
        if (c.snapped) this.counts.entitySnaps++;
        else {
          this.counts.lastEntityCorrection = c.shift;
          this.counts.maxEntityCorrection = Math.max(this.counts.maxEntityCorrection, c.shift);
        }
        this.events.emit('entityCorrection', c);
      }
    }
    if (!this.ticking && this.predictor.ready) {
      this.ticking = true;
      this.ticker.update(now, () => undefined); // start the clock now, not from page load
    }
    this.events.emit('snapshot', h.tick);
  }

  /**
   * The first snapshot from a new host: its ticks, input sequence and
   * timing start afresh, so everything keyed to the old host's does too.
   */
  private restartWithNewHost(playout: PlayoutClock): void {
    this.playout = playout;
    this.nextPlayout = null;
    this.handedOver = null;
    this.buffer.clear();
    this.predictor = this.makePredictor();
    this.entityPredictor = this.makeEntityPredictor();
    this.lead = new InputLead();
    this.newestTick = 0;
    this.newest = null;
    this.stickyTotal = 0;
    this.m.loss = new LossMeter();
    this.m.jitter = new JitterMeter();
    this.m.rtt = new RttMeter();
  }
}
