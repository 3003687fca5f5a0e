import { describe, expect, it } from 'vitest';
import type { Handover, NetPlayer } from './game.js';
import type { NetHost } from './host/host.js';
import { client, host, run, SCORE, World } from './testing/handover.test-util.js';
import { SimClock } from './testing/sim-clock.js';
import { SimNetwork } from './testing/sim-network.js';
import type { MoverField, MoverInput } from './testing/movers.test-util.js';

// Host migration on simulated time: three tabs play, the host's tab goes
// away, the promoted client continues the game from the newest snapshot it
// received, and the remaining client carries on as a client of the new host.

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
