// The pieces of a host migration on simulated time, shared by the hand-over
// test and the frozen-host simulation: a world with a score the old host
// alone knows, and the host and clients that play it.
import type { Handover } from '../game.js';
import { NetClient } from '../client/client.js';
import { NetHost } from '../host/host.js';
import type { NetTransport } from '../transport/transport.js';
import type { Entity } from '../wire/schema.js';
import type { SimClock } from './sim-clock.js';
import { moveMover, moverGame, MoverWorld, scriptedInput, type MoverField, type MoverInput } from './movers.test-util.js';

/** A world with one extra entity the game never changes by itself: a stand-in for a score. */
export const SCORE = 900;

export class World extends MoverWorld {
  score: Entity<MoverField> = { x: 0, y: 0, vx: 0, vy: 0, kind: 2 };

  /** Continues from a handover: every handed-over player's mover and the score, nothing of the old host. */
  static from(h: Handover<MoverField>): World {
    const w = new World();
    for (const p of h.players) {
      const e = h.entities.get(p.slot);
      if (e) w.movers.set(p.id, { slot: p.slot, e: { ...e } });
    }
    const score = h.entities.get(SCORE);
    if (score) w.score = { ...score };
    return w;
  }

  /** playerJoin after a handover names players already in the world: keep them where they are. */
  override spawn(id: string, slot: number): void {
    if (!this.movers.has(id)) super.spawn(id, slot);
  }

  override *entities(): Iterable<readonly [number, Entity<MoverField>]> {
    yield* super.entities();
    yield [SCORE, this.score];
  }
}

export function host(transport: NetTransport, clock: SimClock, world: World, seed: number, handover?: Handover<MoverField>) {
  const h = new NetHost<MoverInput, MoverField>({
    transport,
    game: moverGame,
    scheduler: clock,
    localInput: scriptedInput(seed),
    step: (t) => world.step(t),
    capture: () => world.entities(),
    handover,
  });
  h.on('playerJoin', (p) => world.spawn(p.id, p.slot));
  h.on('playerLeave', (p) => world.remove(p.id));
  return h;
}

export function client(transport: NetTransport, clock: SimClock, seed: number) {
  return new NetClient<MoverInput, MoverField>({
    transport,
    game: moverGame,
    scheduler: clock,
    readInput: scriptedInput(seed),
    predict: moveMover,
    smoothFields: ['x', 'y'],
  });
}

export function run(clock: SimClock, ms: number, clients: NetClient<MoverInput, MoverField>[]): void {
  for (let t = 0; t < ms; t += 1000 / 60) {
    clock.advance(1000 / 60);
    for (const c of clients) c.view();
  }
}

