import { Emitter, type Unsubscribe } from '@hostrelay/sdk';
import { DEFAULT_SNAPSHOT_RATE, DEFAULT_TICK_RATE, type Handover, type NetGame, type NetPlayer, type NetView } from '../game.js';
import { FixedTicker } from '../ticker.js';
import { browserScheduler, type NetTransport, type Scheduler } from '../transport/transport.js';
import { ByteWriter, WireError } from '../wire/bytes.js';
import { encodeDelta } from '../wire/delta.js';
import { decodeEvent, decodeInputPacket, encodeEvent, PacketType, writeSnapshotHeader, type InputPacket } from '../wire/packets.js';
import { lerpEntity, quantizeAll, type Entity, type EntityMap, type ReadonlyEntityMap } from '../wire/schema.js';
import { hashEntities, HashLog } from '../wire/state-hash.js';
import { RemotePeer, type HostPeerStats } from './peer.js';
import { Validator, type Position, type ValidationRules, type Verdict, type Violation } from './validation.js';

/** What the game's step function gets each tick. */
export interface HostTick<I> {
  readonly tick: number;
  /** Seconds per tick (1 / tickRate): the step is fixed, never the frame time. */
  readonly dt: number;
  /** Every player's input for this tick, the host's own included. */
  readonly inputs: ReadonlyMap<string, I>;
  /** Players whose input is a repeat this tick because their next one was late. */
  readonly sticky: ReadonlySet<string>;
}

export interface HostValidation {
  rules: ValidationRules;
  /** Where the player is after this tick, or null to skip them (not spawned, dead). */
  position(playerId: string): Position | null;
  /** Asked when a player's score reaches the threshold (default: kick). */
  verdict?: (violation: Violation) => Verdict;
}

export interface NetHostOptions<I, F extends string> {
  transport: NetTransport;
  game: NetGame<I, F>;
  /** Advances the world one tick. */
  step(tick: HostTick<I>): void;
  /** Every networked entity as it is now, any order. Called after each step. */
  capture(): Iterable<readonly [number, Readonly<Entity<F>>]>;
  /**
   * Samples the host's own player's input; called once per tick (the same
   * option as NetClient's). Omit it and the host does not play.
   */
  readInput?: () => I;
  /** @deprecated The old name of `readInput` (still honoured; `readInput` wins if both are set). */
  localInput?: () => I;
  /** Snapshots per second sent to each client (default 30; the tick rate divided by a whole number). */
  snapshotRate?: number;
  /** Encode each snapshot against the client's last acknowledged one (default true). */
  deltaCompression?: boolean;
  /** Put a hash of the state in each snapshot so clients can detect desync (default true; 4 bytes). */
  stateHash?: boolean;
  validation?: HostValidation;
  scheduler?: Scheduler;
  /** Snapshots kept as delta baselines (default 64, 2 s at 30 Hz); older acks get a full snapshot. */
  historySize?: number;
  /**
   * Continue a game whose host went away, from what this tab received as a
   * client (NetClient.handover()). The tick goes on from the handover's, the
   * host plays in its old slot, and every other handed-over player keeps
   * its slot and is in `players` at once, waiting for its link to reopen.
   * Seed your world from `handover.entities` before start(): playerJoin
   * then fires for players who are already in it.
   */
  handover?: Handover<F>;
  /** How long a handed-over player may take to reconnect before it is dropped (ms; default 10 s). */
  handoverGraceMs?: number;
}

export const DEFAULT_HANDOVER_GRACE_MS = 10_000;

export interface NetHostEvents<F extends string> {
  playerJoin: [player: NetPlayer];
  playerLeave: [player: NetPlayer];
  /** After each tick's capture: the world as clients will see it. */
  tick: [tick: number, entities: ReadonlyEntityMap<F>];
  /** A client's input sequence was applied (each exactly once, in order). */
  inputApplied: [playerId: string, seq: number];
  violation: [violation: Violation];
  kick: [player: NetPlayer, reason: string];
  /** A game event a client sent over the reliable channel. */
  event: [playerId: string, payload: Uint8Array];
}

/**
 * The authority. Runs the game at a fixed tick, applies each client's inputs
 * exactly once and in order, and sends each client a snapshot several times
 * a second, delta-encoded against the last one that client acknowledged.
 *
 * @example
 * const host = new NetHost({
 *   transport: sessionTransport(session),
 *   game,
 *   readInput: () => keyboard.read(),
 *   step: ({ inputs, dt }) => world.step(inputs, dt),
 *   capture: () => world.entities(),
 * });
 * host.on('playerJoin', (p) => world.spawn(p.id, p.slot));
 * host.on('playerLeave', (p) => world.remove(p.id));
 * host.start();
 * requestAnimationFrame(function draw() { render(host.frame().entities); requestAnimationFrame(draw); });
 */
export class NetHost<I, F extends string> {
  readonly tickRate: number;
  readonly snapshotRate: number;
  /** Hash of each snapshot's state, by tick (when stateHash is on). */
  readonly hashLog = new HashLog();
  private readonly o: NetHostOptions<I, F>;
  private readonly events = new Emitter<NetHostEvents<F>>();
  private readonly ticker: FixedTicker;
  private readonly scheduler: Scheduler;
  private readonly snapshotEvery: number;
  private readonly peers = new Map<string, RemotePeer<I>>();
  private readonly history = new Map<number, ReadonlyEntityMap<F>>();
  /** When each snapshot tick went out, to time the client's acknowledgement (RTT). */
  private readonly sentAt = new Map<number, number>();
  /** Kicked players stay out, whatever they send. */
  private readonly banned = new Set<string>();
  private readonly validator: Validator | null;
  private readonly writer = new ByteWriter(1024);
  private readonly offs: Unsubscribe[] = [];
  private readonly local: NetPlayer | null;
  private readonly readInput: (() => I) | null;
  private current: EntityMap<F> = new Map();
  private previous: EntityMap<F> = new Map();
  private tickNo = 0;
  private packetSeq = 0;
  private stopTimer: (() => void) | null = null;
  private graceTimer: (() => void) | null = null;
  private running = false;

  constructor(options: NetHostOptions<I, F>) {
    this.o = options;
    this.tickRate = options.game.tickRate ?? DEFAULT_TICK_RATE;
    this.snapshotRate = Math.min(this.tickRate, options.snapshotRate ?? DEFAULT_SNAPSHOT_RATE);
    this.snapshotEvery = Math.max(1, Math.round(this.tickRate / this.snapshotRate));
    this.scheduler = options.scheduler ?? browserScheduler;
    // Up to 0.5 s of catch-up per update: the host may be woken only by
    // incoming packets while its tab is hidden and timers are throttled.
    this.ticker = new FixedTicker(this.tickRate, Math.ceil(this.tickRate / 2));
    this.validator = options.validation ? new Validator(options.validation.rules) : null;
    const h = options.handover;
    this.readInput = options.readInput ?? options.localInput ?? null;
    this.local = this.readInput ? { id: options.transport.localId, slot: h?.slot ?? 0 } : null;
    if (h) {
      this.tickNo = h.tick;
      this.current = quantizeAll(options.game.schema, h.entities);
      this.previous = this.current;
      for (const player of h.players) {
        if (player.id === options.transport.localId || player.id === h.previousHost) continue;
        const peer = new RemotePeer(player, options.game.input.neutral, this.tickRate);
        peer.connected = false;
        this.peers.set(player.id, peer);
      }
    }
  }

  on<K extends keyof NetHostEvents<F>>(event: K, listener: (...args: NetHostEvents<F>[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  /** The last tick run. */
  get tick(): number {
    return this.tickNo;
  }

  /** Everyone playing: the host (if it plays), each connected client and any handed-over player still reconnecting. */
  get players(): NetPlayer[] {
    return [...(this.local ? [this.local] : []), ...[...this.peers.values()].map((p) => p.player)];
  }

  /** Handed-over players whose link to this host has not opened yet. */
  get reconnecting(): NetPlayer[] {
    return [...this.peers.values()].filter((p) => !p.connected).map((p) => p.player);
  }

  /**
   * Starts ticking on the scheduler and takes the peers already connected.
   * Subscribe to playerJoin first: it fires here for them and for the host.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    const t = this.o.transport;
    this.offs.push(
      t.on('peerOpen', (id) => this.addPeer(id)),
      t.on('peerClose', (id) => this.removePeer(id)),
      t.on('message', (id, data, channel) => (channel === 'game' ? this.onGamePacket(id, data) : this.onEventPacket(id, data))),
    );
    if (this.local) this.events.emit('playerJoin', this.local);
    for (const p of this.peers.values()) this.events.emit('playerJoin', p.player);
    for (const id of t.peers()) this.addPeer(id);
    if (this.reconnecting.length > 0) {
      // Someone whose tab closed as the host did never comes back: free its seat.
      this.graceTimer = this.scheduler.schedule(() => {
        for (const p of this.reconnecting) this.removePeer(p.id);
      }, this.o.handoverGraceMs ?? DEFAULT_HANDOVER_GRACE_MS);
    }
    const pump = (): void => {
      if (!this.running) return;
      this.update();
      // Twice per tick: timers are late, the accumulator absorbs it.
      this.stopTimer = this.scheduler.schedule(pump, this.ticker.stepMs / 2);
    };
    this.ticker.update(this.scheduler.now(), () => undefined);
    pump();
  }

  /** Runs the ticks due by now. start() calls it on a timer; call it from a frame loop too if you like. */
  update(): void {
    if (!this.running) return;
    this.ticker.update(this.scheduler.now(), () => this.runTick());
  }

  /** Stops ticking and listening. The transport is left to its owner. */
  stop(): void {
    this.running = false;
    this.stopTimer?.();
    this.graceTimer?.();
    for (const off of this.offs.splice(0)) off();
  }

  /**
   * What to draw now, the same shape as NetClient's frame(): the world on
   * the host's screen, the last two ticks blended by how far the clock is
   * into the next, so motion is smooth at any frame rate. Like NetClient's,
   * it runs the ticks due first (update()): call it once per rendered frame.
   */
  frame(): NetView<F> {
    this.update();
    return { renderTick: Math.max(0, this.tickNo - 1 + this.ticker.alpha), entities: this.view() };
  }

  /**
   * The entities of frame(), without the object around them (and without
   * running the ticks due: call update() first).
   *
   * @deprecated Use `frame().entities`, which reads the same on NetHost and NetClient.
   */
  view(): ReadonlyEntityMap<F> {
    const alpha = this.ticker.alpha;
    const out: EntityMap<F> = new Map();
    for (const [id, cur] of this.current) {
      const prev = this.previous.get(id);
      out.set(id, prev ? lerpEntity(this.o.game.schema, prev, cur, alpha) : cur);
    }
    return out;
  }

  /** The entities captured after the last tick. */
  get entities(): ReadonlyEntityMap<F> {
    return this.current;
  }

  /** The host tick a client was looking at when it sent the input applied this tick (for lag compensation). */
  viewTick(playerId: string): number | null {
    return this.peers.get(playerId)?.viewTick ?? null;
  }

  /** Tells validation that a player's next jump is legitimate (respawn, reset). */
  allowTeleport(playerId: string): void {
    this.validator?.allowTeleport(playerId);
  }

  /** Adds a game-specific violation (a malformed action, an impossible request). */
  reportViolation(playerId: string, kind: string, detail: string): void {
    if (this.validator && (this.peers.has(playerId) || this.local?.id === playerId)) {
      this.handleViolation(this.validator.report(playerId, kind, this.tickNo, this.scheduler.now(), detail));
    }
  }

  /** Tells the client it is kicked and stops taking its inputs. Removing it from the room is the lobby's job. */
  kick(playerId: string, reason: string): void {
    const peer = this.peers.get(playerId);
    if (!peer) return;
    this.o.transport.send(playerId, encodeEvent({ type: 'kicked', reason }), 'events');
    this.peers.delete(playerId);
    this.banned.add(playerId);
    this.validator?.forget(playerId);
    this.events.emit('kick', peer.player, reason);
    this.events.emit('playerLeave', peer.player);
    this.sendRoster();
  }

  /** Sends a game event over the reliable channel to one client, or to all. */
  sendEvent(payload: Uint8Array, to?: string): void {
    const data = encodeEvent({ type: 'user', payload });
    for (const id of to === undefined ? this.peers.keys() : [to]) this.o.transport.send(id, data, 'events');
  }

  stats(playerId: string): HostPeerStats | null {
    return this.peers.get(playerId)?.stats(this.scheduler.now()) ?? null;
  }

  private runTick(): void {
    const tick = ++this.tickNo;
    const inputs = new Map<string, I>();
    const sticky = new Set<string>();
    if (this.local && this.readInput) inputs.set(this.local.id, this.readInput());
    const applied: [string, number][] = [];
    for (const [id, p] of this.peers) {
      const next = p.next();
      inputs.set(id, next.input);
      if (next.sticky) sticky.add(id);
      if (next.seq !== null) applied.push([id, next.seq]);
    }
    this.o.step({ tick, dt: 1 / this.tickRate, inputs, sticky });
    for (const [id, seq] of applied) this.events.emit('inputApplied', id, seq);
    this.previous = this.current;
    this.current = quantizeAll(this.o.game.schema, this.o.capture());
    this.events.emit('tick', tick, this.current);
    this.validate(tick);
    if (tick % this.snapshotEvery === 0) this.sendSnapshots(tick);
  }

  private validate(tick: number): void {
    const v = this.o.validation;
    if (!v || !this.validator) return;
    const now = this.scheduler.now();
    for (const player of this.players) {
      const pos = v.position(player.id);
      if (!pos) {
        this.validator.allowTeleport(player.id);
        continue;
      }
      const violation = this.validator.checkMove(player.id, pos, 1 / this.tickRate, tick, now);
      if (violation) this.handleViolation(violation);
    }
  }

  private handleViolation(v: Violation): void {
    this.events.emit('violation', v);
    if (!this.validator?.overThreshold(v) || v.playerId === this.local?.id) return;
    const verdict = this.o.validation?.verdict?.(v) ?? 'kick';
    if (verdict === 'kick') this.kick(v.playerId, `${v.kind}: ${v.detail}`);
  }

  private sendSnapshots(tick: number): void {
    const schema = this.o.game.schema;
    this.history.set(tick, this.current);
    const keep = this.o.historySize ?? 64;
    for (const t of this.history.keys()) {
      if (this.history.size <= keep) break;
      this.history.delete(t);
    }
    const hash = this.o.stateHash === false ? null : hashEntities(schema, this.current);
    if (hash !== null) this.hashLog.record(tick, hash);
    const now = this.scheduler.now();
    const delta = this.o.deltaCompression !== false;
    for (const [id, p] of this.peers) {
      if (!p.connected) continue;
      const base = delta && p.ackTick > 0 ? this.history.get(p.ackTick) : undefined;
      const w = this.writer;
      w.reset();
      writeSnapshotHeader(w, {
        packetSeq: this.packetSeq,
        tick,
        baseTick: base ? p.ackTick : 0,
        ackSeq: p.queue.lastApplied,
        stickyTotal: p.queue.stats.sticky,
        echo: p.echoAt(now),
        inputSlack: p.takeSlack(),
        upLoss255: Math.round(p.lossIn * 255),
        hash,
      });
      encodeDelta(schema, base ?? null, this.current, w, base ? (tick - p.ackTick) / this.tickRate : 0);
      const data = w.finish();
      this.o.transport.send(id, data, 'game');
      p.sentSnapshot(now, data.length);
      this.sentAt.set(tick, now);
    }
    this.packetSeq = (this.packetSeq + 1) & 0xffff;
    for (const t of this.sentAt.keys()) {
      if (this.sentAt.size <= keep) break;
      this.sentAt.delete(t);
    }
  }

  private onGamePacket(id: string, data: Uint8Array): void {
    const p = this.peers.get(id);
    if (!p || data[0] !== PacketType.Input) return;
    const now = this.scheduler.now();
    p.arrived(now, data.length);
    let packet: InputPacket<I>;
    try {
      packet = decodeInputPacket(this.o.game.input, data);
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      p.badPackets++;
      this.reportViolation(id, 'input', err.message);
      return;
    }
    p.receive(packet, now, this.tickNo, (tick) => this.sentAt.get(tick));
    // An arriving input is a good moment to catch up: a hidden tab's timers crawl, packets do not.
    this.update();
  }

  private onEventPacket(id: string, data: Uint8Array): void {
    let e;
    try {
      e = decodeEvent(data);
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      return;
    }
    if (e.type === 'hello') {
      // The client's game started listening after its channels opened (it
      // mounted later than ours): our welcome may have gone to nobody.
      const p = this.peers.get(id);
      if (!p || !p.connected) this.addPeer(id);
      else this.welcome(id);
      return;
    }
    if (e.type === 'user' && this.peers.has(id)) this.events.emit('event', id, e.payload);
  }

  private welcome(id: string): void {
    const p = this.peers.get(id);
    if (!p) return;
    const t = this.o.transport;
    t.send(id, encodeEvent({ type: 'welcome', slot: p.player.slot, tickRate: this.tickRate, snapshotRate: this.snapshotRate }), 'events');
    t.send(id, encodeEvent({ type: 'roster', players: this.players.map((q) => ({ slot: q.slot, id: q.id })) }), 'events');
  }

  private addPeer(id: string): void {
    if (this.banned.has(id) || id === this.o.transport.localId || !this.running) return;
    if (!this.o.transport.peers().includes(id)) return;
    const known = this.peers.get(id);
    if (known) {
      if (known.connected) return;
      // A handed-over player is back: same slot, same entity.
      known.connected = true;
      this.welcome(id);
      return;
    }
    const used = new Set([...this.peers.values()].map((p) => p.player.slot));
    // Slot 0 is the host's unless a handover gave the host another one.
    used.add(this.local?.slot ?? 0);
    if (this.o.handover && !this.local) used.delete(0);
    let slot = 0;
    while (used.has(slot)) slot++;
    if (slot > 255) return;
    const player: NetPlayer = { id, slot };
    this.peers.set(id, new RemotePeer(player, this.o.game.input.neutral, this.tickRate));
    this.events.emit('playerJoin', player);
    this.welcome(id);
    this.sendRoster(id);
  }

  private removePeer(id: string): void {
    const p = this.peers.get(id);
    if (!p) return;
    this.peers.delete(id);
    this.validator?.forget(id);
    this.events.emit('playerLeave', p.player);
    this.sendRoster();
  }

  private sendRoster(except?: string): void {
    const data = encodeEvent({ type: 'roster', players: this.players.map((p) => ({ slot: p.slot, id: p.id })) });
    for (const id of this.peers.keys()) if (id !== except) this.o.transport.send(id, data, 'events');
  }
}
