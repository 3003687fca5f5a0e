import { describe, expect, it } from 'vitest';
import { SimClock, SimNetwork, type NetTransport, type ReadonlyEntityMap } from '@hostrelay/netcode';
import { ClientGame } from './client-game';
import { HostGame } from './host-game';
import { inputCodec, type Field } from './schema';

// Host migration on simulated time with the arena's own game classes: Ada
// hosts, Bob and Cal play; Ada's tab goes away, Bob's tab becomes the host
// (as index.ts promote() does) and Cal carries on as Bob's client. Nobody
// presses anything, so nothing may move.

const idle = (): typeof inputCodec.neutral => inputCodec.neutral;
const FRAME_MS = 1000 / 60;

describe('arena host migration', () => {
  it("a client's own player stays put when its first tick under the new host comes before its next frame", () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'ada');
    const ada = new HostGame(net.hostTransport(), idle, clock);
    ada.start();
    const bobT: NetTransport = net.addClient('bob', { latencyMs: 20 }, 1);
    let bob: ClientGame | null = new ClientGame(bobT, idle, clock);
    const cal = new ClientGame(net.addClient('cal', { latencyMs: 20 }, 2), idle, clock);
    let bobHost: HostGame | null = null;
    bob.net.on('hostChanged', (id) => {
      if (id !== 'bob' || !bob) return;
      const handover = bob.net.handover() ?? undefined;
      bob.stop();
      bob = null;
      bobHost = new HostGame(bobT, idle, clock, true, handover);
      bobHost.start();
    });
    bob.start();
    cal.start();

    // Frames are drawn every 1/60 s; the netcode's own timer runs ticks in between.
    let calDrawn: ReadonlyEntityMap<Field> = new Map();
    let holdCalUntil = -1;
    const frames = (ms: number): void => {
      for (const end = clock.now() + ms; clock.now() < end; ) {
        clock.advance(FRAME_MS);
        ada.view();
        bob?.view();
        bobHost?.view();
        if (clock.now() >= holdCalUntil) calDrawn = cal.view().entities;
      }
    };
    frames(3000);
    const calSlot = cal.net.slot!;
    expect(calSlot).toBe(2);
    const rest = { ...ada.net.entities.get(calSlot)! };
    expect(calDrawn.get(calSlot)).toMatchObject({ x: rest.x, y: rest.y });

    // Cal draws frames while it waits for the new host. Its next frame after
    // the welcome comes late (a busy page; rAF and timers are independent),
    // so the first ticks under Bob run before Cal draws again.
    cal.net.on('welcome', () => (holdCalUntil = clock.now() + 50));
    ada.stop();
    net.migrate('bob');
    let furthest = 0;
    for (let t = 0; t < 1500; t += FRAME_MS) {
      frames(FRAME_MS);
      const e = calDrawn.get(calSlot);
      if (e) furthest = Math.max(furthest, Math.hypot(e.x - rest.x, e.y - rest.y));
    }
    expect(holdCalUntil).toBeGreaterThan(0); // Bob welcomed Cal
    expect(cal.net.synced).toBe(true);
    expect(cal.net.stats().predictionsChecked).toBeGreaterThan(0);
    expect(bobHost!.arena.player('cal')).toMatchObject({ x: rest.x, y: rest.y });
    expect(furthest, "Cal's own player as Cal's tab draws it").toBe(0);
  });
});
