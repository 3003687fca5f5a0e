import { describe, expect, it } from 'vitest';
import type { Handover, NetPlayer } from './game.js';
import { NetClient } from './client/client.js';
import { NetHost } from './host/host.js';
import { SimClock } from './testing/sim-clock.js';
import { SimNetwork } from './testing/sim-network.js';
import { moveMover, moverGame, MoverWorld, scriptedInput, type MoverField, type MoverInput } from './testing/movers.test-util.js';
import type { NetTransport } from './transport/transport.js';
import type { Entity } from './wire/schema.js';

// Host migration on simulated time: three tabs play, the host's tab goes
// away, the promoted client continues the game from the newest snapshot it
// received, and the remaining client carries on as a client of the new host.

/** A world with one extra entity the game never changes by itself: a stand-in for a score. */
const SCORE = 900;

class World extends MoverWorld {
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

function host(transport: NetTransport, clock: SimClock, world: World, seed: number, handover?: Handover<MoverField>) {
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

function client(transport: NetTransport, clock: SimClock, seed: number) {
  return new NetClient<MoverInput, MoverField>({
    transport,
    game: moverGame,
    scheduler: clock,
    readInput: scriptedInput(seed),
    predict: moveMover,
    smoothFields: ['x', 'y'],
  });
}

function run(clock: SimClock, ms: number, clients: NetClient<MoverInput, MoverField>[]): void {
  for (let t = 0; t < ms; t += 1000 / 60) {
    clock.advance(1000 / 60);
    for (const c of clients) c.view();
  }
}

const slots = (players: readonly NetPlayer[]): [string, number][] => players.map((p) => [p.id, p.slot]);

describe('host migration', () => {
  it('the promoted client continues the game from its newest snapshot; the other client follows it', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'ada');
    const world = new World();
    world.score.x = 3; // "3 goals so far": only the old host's world knows it
    const ada = host(net.hostTransport(), clock, world, 7);
    ada.start();
    const bobT = net.addClient('bob', { latencyMs: 20 }, 1);
    const calT = net.addClient('cal', { latencyMs: 30 }, 2);
    const bob = client(bobT, clock, 11);
    const cal = client(calT, clock, 12);
    bob.start();
    cal.start();
    run(clock, 3000, [bob, cal]);
    expect(slots(ada.players)).toEqual([['ada', 0], ['bob', 1], ['cal', 2]]);
    const calSlot = cal.slot;
    const welcomes: number[] = [];
    cal.on('welcome', (slot) => welcomes.push(slot));

    // Ada's tab closes; the lobby promotes Bob.
    let bobHost: NetHost<MoverInput, MoverField> | null = null;
    let bobWorld: World | null = null;
    let handover: Handover<MoverField> | null = null;
    bob.on('hostChanged', (id) => {
      if (id !== 'bob') return;
      handover = bob.handover();
      bob.stop();
      bobWorld = World.from(handover!);
      bobHost = host(bobT, clock, bobWorld, 13, handover!);
      bobHost.start();
    });
    ada.stop();
    net.migrate('bob');
    expect(handover).not.toBeNull();
    const h = handover! as Handover<MoverField>;
    // The handover is what Bob last received from Ada, minus Ada.
    expect(h.previousHost).toBe('ada');
    expect(slots(h.players)).toEqual([['bob', 1], ['cal', 2]]);
    expect(h.slot).toBe(1);
    expect(h.entities.get(SCORE)?.x).toBe(3);
    expect(h.tick).toBeGreaterThan(150);
    const nh = bobHost! as NetHost<MoverInput, MoverField>;
    expect(nh.tick).toBe(h.tick);
    expect(nh.entities.get(1)).toEqual(h.entities.get(1));
    expect(slots(nh.players)).toEqual([['bob', 1], ['cal', 2]]);
    expect(slots(nh.reconnecting)).toEqual([['cal', 2]]);
    const calBefore = { ...h.entities.get(2)! };

    let calApplied = 0;
    nh.on('inputApplied', (id) => {
      if (id === 'cal') calApplied++;
    });
    run(clock, 2000, [cal]);

    // Cal is back in the same slot, playing: the new host applies its inputs.
    expect(nh.reconnecting).toEqual([]);
    expect(welcomes).toEqual([calSlot]);
    expect(cal.synced).toBe(true);
    expect(calApplied).toBeGreaterThan(90);
    expect(nh.tick).toBeGreaterThan(h.tick + 100);
    // The game went on from the handed-over world: the score survived, Ada's mover is gone,
    // and Cal's mover moved on from where it was (≤ 300 units/s × 2.1 s), not from a respawn.
    const view = cal.view().entities;
    expect(view.get(SCORE)?.x).toBe(3);
    expect(view.has(0)).toBe(false);
    expect(Math.hypot(view.get(2)!.x - calBefore.x, view.get(2)!.y - calBefore.y)).toBeLessThan(300 * 2.1);
    expect(cal.stats().desyncs).toBe(0);
    expect(slots(cal.players)).toEqual([['bob', 1], ['cal', 2]]);

    // A newcomer gets the slot Ada left.
    const dan = client(net.addClient('dan', {}, 3), clock, 14);
    dan.start();
    run(clock, 500, [cal, dan]);
    expect(dan.slot).toBe(0);
  });

  it('a handed-over player who never comes back is dropped after the grace period', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'ada');
    const world = new World();
    const ada = host(net.hostTransport(), clock, world, 7);
    ada.start();
    const bobT = net.addClient('bob', {}, 1);
    const bob = client(bobT, clock, 11);
    const cal = client(net.addClient('cal', {}, 2), clock, 12);
    bob.start();
    cal.start();
    run(clock, 1000, [bob, cal]);

    // Cal's tab went with Ada's (the same machine, say).
    cal.stop();
    net.removeClient('cal');
    ada.stop();
    net.migrate('bob');
    const h = bob.handover()!;
    bob.stop();
    const w = World.from(h);
    const nh = host(bobT, clock, w, 13, h);
    const left: string[] = [];
    nh.on('playerLeave', (p) => left.push(p.id));
    nh.start();
    expect(w.movers.has('cal')).toBe(true);
    run(clock, 9000, []);
    expect(left).toEqual([]);
    run(clock, 1500, []);
    expect(left).toEqual(['cal']);
    expect(w.movers.has('cal')).toBe(false);
    expect(slots(nh.players)).toEqual([['bob', 1]]);
  });

  it('handover() is null before the first welcome and snapshot', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'ada');
    const bob = client(net.addClient('bob', {}, 1), clock, 11);
    bob.start();
    expect(bob.handover()).toBeNull();
  });
});
