import type { DeterministicGame } from '../lockstep/game.js';
import { LockstepSession, type LockstepOptions } from '../lockstep/session.js';
import { seededRandom } from '../transport/rng.js';
import type { ConditionedTransport, Conditions } from '../transport/conditioner.js';
import type { NetTransport } from '../transport/transport.js';
import { buttonsCodec, type Buttons } from '../wire/input-codec.js';
import type { LockstepMode } from '../wire/lockstep-packets.js';
import { SimClock } from './sim-clock.js';
import { SimNetwork } from './sim-network.js';

// A deterministic kickball duel in integer physics (1/256 px fixed point):
// players accelerate with the arrows, rub off speed, and push the ball
// whenever they touch it; a ball through either end scores and resets.

export type KickInput = Buttons<'up' | 'down' | 'left' | 'right'>;

export interface Kickball {
  /** Per player: x, y, vx, vy; then the ball's four; then the two scores. */
  readonly v: readonly number[];
}

const W = 640 * 256;
const H = 360 * 256;
const ACC = 40;
const REACH = 24 * 256;

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

export function kickballGame(perturb?: { slot: number; frame: number }, slotOf?: () => number): DeterministicGame<Kickball, KickInput> {
  return {
    input: buttonsCodec(['up', 'down', 'left', 'right'] as const),
    initial: (players) => {
      const v: number[] = [];
      for (let i = 0; i < players; i++) v.push(((i + 1) * W) / (players + 1), H / 2, 0, 0);
      v.push(W / 2, H / 3, 0, 0, 0, 0);
      return { v };
    },
    step: (s, inputs, frame) => {
      const v = [...s.v];
      const n = inputs.length;
      const b = 4 * n;
      for (let i = 0; i < n; i++) {
        const inp = inputs[i]!;
        const o = 4 * i;
        v[o + 2] = ((v[o + 2]! + ((inp.right ? 1 : 0) - (inp.left ? 1 : 0)) * ACC) * 15) >> 4;
        v[o + 3] = ((v[o + 3]! + ((inp.down ? 1 : 0) - (inp.up ? 1 : 0)) * ACC) * 15) >> 4;
        v[o] = clamp(v[o]! + v[o + 2]!, 0, W);
        v[o + 1] = clamp(v[o + 1]! + v[o + 3]!, 0, H);
        const dx = v[b]! - v[o]!;
        const dy = v[b + 1]! - v[o + 1]!;
        if (Math.abs(dx) < REACH && Math.abs(dy) < REACH) {
          v[b + 2] = v[b + 2]! + (dx >> 4);
          v[b + 3] = v[b + 3]! + (dy >> 4);
        }
      }
      v[b + 2] = (v[b + 2]! * 63) >> 6;
      v[b + 3] = (v[b + 3]! * 63) >> 6;
      v[b] = v[b]! + v[b + 2]!;
      v[b + 1] = v[b + 1]! + v[b + 3]!;
      if (v[b + 1]! < 0 || v[b + 1]! > H) {
        v[b + 1] = clamp(v[b + 1]!, 0, H);
        v[b + 3] = -v[b + 3]!;
      }
      if (v[b]! < 0 || v[b]! > W) {
        v[v[b]! < 0 ? b + 5 : b + 4]!++;
        v[b] = W / 2;
        v[b + 1] = H / 3;
        v[b + 2] = 0;
        v[b + 3] = 0;
      }
      // The ball one 1/256 px off on one peer: the smallest divergence there is.
      if (perturb && frame === perturb.frame && slotOf?.() === perturb.slot) v[b + 1] = v[b + 1]! + 1;
      return { v };
    },
    serialize: (s) => new Uint8Array(Int32Array.from(s.v).buffer),
    // For resyncs (late join, resume, desync heal, mode switch).
    deserialize: (b) => ({ v: Array.from(new Int32Array(b.slice().buffer)) }),
  };
}

/** A player who changes what they hold every 5–40 frames, from a seed. */
export function scriptedPlayer(seed: number): () => KickInput {
  const rand = seededRandom(seed);
  let left = 0;
  let held: KickInput = { up: false, down: false, left: false, right: false };
  return () => {
    if (left-- <= 0) {
      left = 5 + Math.floor(rand() * 36);
      held = { up: rand() < 0.3, down: rand() < 0.3, left: rand() < 0.4, right: rand() < 0.4 };
    }
    return held;
  };
}

export interface KickballMatch {
  clock: SimClock;
  net: SimNetwork;
  peers: LockstepSession<Kickball, KickInput>[];
  /** Each client's conditioned link, in client order (setConditions changes it mid-match). */
  links: ConditionedTransport[];
  /** Opens a new client's link and starts its session mid-match (a late joiner, or a player back after a cut). */
  make(id: string, conditions: Partial<Conditions>, seed: number, session?: Partial<LockstepOptions<Kickball, KickInput>>): { peer: LockstepSession<Kickball, KickInput>; link: ConditionedTransport };
}

/**
 * A host and `clients` clients playing kickball in `mode` on simulated
 * time, every client's link with the given conditions each way.
 */
export function kickballMatch(opts: {
  mode: LockstepMode;
  clients: number;
  conditions: { latencyMs?: number; jitterMs?: number; loss?: number };
  seed: number;
  perturb?: { slot: number; frame: number };
  session?: Partial<LockstepOptions<Kickball, KickInput>>;
}): KickballMatch {
  const clock = new SimClock();
  const net = new SimNetwork(clock, 'host');
  const peers: LockstepSession<Kickball, KickInput>[] = [];
  const make = (transport: NetTransport, seed: number): void => {
    let self: LockstepSession<Kickball, KickInput> | null = null;
    const session = new LockstepSession<Kickball, KickInput>({
      transport,
      game: kickballGame(opts.perturb, () => self?.slot ?? -1),
      mode: opts.mode,
      readInput: scriptedPlayer(seed),
      players: opts.clients + 1,
      scheduler: clock,
      ...opts.session,
    });
    self = session;
    peers.push(session);
  };
  make(net.hostTransport(), opts.seed * 100);
  const links: ConditionedTransport[] = [];
  for (let i = 1; i <= opts.clients; i++) {
    const link = net.addClient(`c${i}`, opts.conditions, opts.seed * 100 + i);
    links.push(link);
    make(link, opts.seed * 100 + i);
  }
  for (const p of peers) p.start();
  const late: KickballMatch['make'] = (id, conditions, seed, session) => {
    const link = net.addClient(id, conditions, seed);
    let self: LockstepSession<Kickball, KickInput> | null = null;
    const peer = new LockstepSession<Kickball, KickInput>({
      transport: link,
      game: kickballGame(opts.perturb, () => self?.slot ?? -1),
      mode: opts.mode,
      readInput: scriptedPlayer(seed),
      scheduler: clock,
      ...opts.session,
      ...session,
    });
    self = peer;
    peer.start();
    return { peer, link };
  };
  return { clock, net, peers, links, make: late };
}
