// Runnable examples, one per entry point of the netcode SDK. They are the
// documentation (docs/netcode.md points here): each is a complete program
// on simulated time, so it runs in milliseconds and shows real output.
import { describe, expect, it } from 'vitest';
import {
  buttonsCodec,
  ConditionedTransport,
  firstDivergentTick,
  HashLog,
  LagCompensator,
  NetClient,
  NetHost,
  Schema,
  SimClock,
  SimNetwork,
  Validator,
  type Buttons,
  type Entity,
  type Handover,
  type NetGame,
  type NetTransport,
} from './index.js';

// 1. Define the game once; host and clients import it.
const schema = Schema.define({
  x: { precision: 1 / 16, snapOver: 200 }, // rounded on the host, so prediction replays exactly
  y: { precision: 1 / 16, snapOver: 200 },
});
type Field = (typeof schema)['fields'][number];
type Input = Buttons<'up' | 'down' | 'left' | 'right'>;
const game: NetGame<Input, Field> = { schema, input: buttonsCodec(['up', 'down', 'left', 'right'] as const), tickRate: 60 };

// The movement rule, shared: the host runs it for everyone, a client for itself.
function move(e: Entity<Field>, i: Input, dt: number): void {
  e.x += ((i.right ? 1 : 0) - (i.left ? 1 : 0)) * 200 * dt;
  e.y += ((i.down ? 1 : 0) - (i.up ? 1 : 0)) * 200 * dt;
}

type Players = Map<string, { slot: number; e: Entity<Field> }>;

/** The host's step for every player, as the first example spells out: move, then round. */
function movePlayers(players: Players, inputs: ReadonlyMap<string, Input>, dt: number): void {
  for (const [id, input] of inputs) {
    const p = players.get(id);
    if (p) move(p.e, input, dt), schema.quantize(p.e);
  }
}

describe('examples', () => {
  it('host and client: a fixed-tick host, a predicting client', () => {
    // In a browser: transport = sessionTransport(roomSession) and no scheduler.
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'host');

    const players = new Map<string, { slot: number; e: Entity<Field> }>();
    const host = new NetHost<Input, Field>({
      transport: net.hostTransport(),
      game,
      scheduler: clock,
      step: ({ inputs, dt }) => {
        for (const [id, input] of inputs) {
          const p = players.get(id);
          if (!p) continue;
          move(p.e, input, dt);
          schema.quantize(p.e); // round as the wire will: prediction then replays exactly
        }
      },
      capture: () => [...players.values()].map((p) => [p.slot, p.e] as const), // entity id = slot
    });
    host.on('playerJoin', (p) => players.set(p.id, { slot: p.slot, e: { x: 100 * p.slot, y: 0 } }));
    host.on('playerLeave', (p) => players.delete(p.id));
    host.start();

    const client = new NetClient<Input, Field>({
      transport: net.addClient('grace', { latencyMs: 40 }), // 80 ms round trip
      game,
      scheduler: clock,
      readInput: () => ({ up: false, down: false, left: false, right: true }), // holds →
      predict: move,
      smoothFields: ['x', 'y'],
    });
    client.start();

    for (let frame = 0; frame < 60; frame++) {
      clock.advance(1000 / 60);
      const view = client.view(); // draw view.entities; view.local is us, predicted
      if (frame === 59) {
        // One second in: we moved right at once; the host has seen most of it.
        expect(view.local!.x).toBeGreaterThan(100 + 150);
        expect(players.get('grace')!.e.x).toBeGreaterThan(100 + 100);
      }
    }
    expect(client.stats().corrections).toBe(0); // every prediction matched the host
  });

  it('predicted entities: a box the player pushes moves in the frame of the push', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'host');
    const BOX = 100;
    // The host's rule for the box, shared: a player walking into it shoves it ahead.
    const shove = (box: Entity<Field>, p: Readonly<Entity<Field>>): void => {
      if (Math.abs(box.y - p.y) < 20 && box.x > p.x && box.x < p.x + 20) box.x = p.x + 20;
    };
    const players: Players = new Map();
    const box: Entity<Field> = { x: 200, y: 0 };
    const host = new NetHost<Input, Field>({
      transport: net.hostTransport(),
      game,
      scheduler: clock,
      step: ({ inputs, dt }) => {
        movePlayers(players, inputs, dt);
        for (const p of players.values()) shove(box, p.e);
        schema.quantize(box);
      },
      capture: () => [...[...players.values()].map((p) => [p.slot, p.e] as const), [BOX, box] as const],
    });
    host.on('playerJoin', (p) => players.set(p.id, { slot: p.slot, e: { x: 100, y: 0 } }));
    host.start();

    const client = new NetClient<Input, Field>({
      transport: net.addClient('grace', { latencyMs: 50 }), // 100 ms round trip
      game,
      scheduler: clock,
      readInput: () => ({ up: false, down: false, left: false, right: true }), // walks into the box
      predict: move,
      smoothFields: ['x', 'y'],
      predictEntities: {
        // Predict the box while we are near it (a wider circle to let go: no flapping at the edge).
        select: (me, drawn, predicted) => {
          const b = drawn.get(BOX);
          return b && Math.abs(b.x - me.x) < (predicted.has(BOX) ? 150 : 100) ? [BOX] : [];
        },
        step: ({ local, entities }) => {
          const b = entities.get(BOX);
          if (b) shove(b, local);
        },
      },
    });
    client.start();

    let touchFrame = -1;
    let boxMoved = -1;
    for (let frame = 0; frame < 90; frame++) {
      clock.advance(1000 / 60);
      const view = client.frame();
      const drawnBox = view.entities.get(BOX);
      if (touchFrame < 0 && client.stats().predictedEntities > 0 && view.local && view.local.x + 20 >= 200) touchFrame = frame;
      if (boxMoved < 0 && drawnBox && drawnBox.x > 200) boxMoved = frame;
    }
    // The box moved on our screen as our player reached it, not a round trip later.
    expect(boxMoved).toBeGreaterThan(0);
    expect(Math.abs(boxMoved - touchFrame)).toBeLessThanOrEqual(1);
    expect(client.stats().entityCorrections).toBe(0); // nobody else touched it: every prediction matched the host
  });

  it('host migration: the promoted client continues from its newest snapshot', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'ada');
    const world = new Map<string, { slot: number; e: Entity<Field> }>();
    const makeHost = (transport: NetTransport, w: typeof world, handover?: Handover<Field>): NetHost<Input, Field> => {
      const h = new NetHost<Input, Field>({
        transport,
        game,
        scheduler: clock,
        handover,
        localInput: () => ({ up: false, down: false, left: false, right: false }),
        step: ({ inputs, dt }) => {
          for (const [id, input] of inputs) {
            const p = w.get(id);
            if (p) move(p.e, input, dt), schema.quantize(p.e);
          }
        },
        capture: () => [...w.values()].map((p) => [p.slot, p.e] as const),
      });
      // After a handover playerJoin names players the seeded world already has: keep them.
      h.on('playerJoin', (p) => w.has(p.id) || w.set(p.id, { slot: p.slot, e: { x: 100 * p.slot, y: 0 } }));
      h.on('playerLeave', (p) => w.delete(p.id));
      return h;
    };
    makeHost(net.hostTransport(), world).start();
    const bobTransport = net.addClient('bob');
    const bob = new NetClient<Input, Field>({
      transport: bobTransport,
      game,
      scheduler: clock,
      readInput: () => ({ up: false, down: false, left: false, right: true }),
      predict: move,
    });
    bob.start();
    for (let f = 0; f < 60; f++) clock.advance(1000 / 60);

    // In a browser the lobby says so (RoomSession 'hostChanged'); here the simulated network does.
    let bobHost: NetHost<Input, Field> | null = null;
    bob.on('hostChanged', (hostId) => {
      if (hostId !== bobTransport.localId) return; // another client was promoted: bob follows it by itself
      const handover = bob.handover()!; // the newest snapshot from Ada, and who had which slot
      bob.stop();
      const seeded = new Map(handover.players.map((p) => [p.id, { slot: p.slot, e: { ...handover.entities.get(p.slot)! } }]));
      bobHost = makeHost(bobTransport, seeded, handover);
      bobHost.start();
    });
    net.migrate('bob'); // Ada's tab closed
    const h = bobHost! as NetHost<Input, Field>;
    expect(h.players.map((p) => [p.id, p.slot])).toEqual([['bob', 1]]); // same slot, Ada gone
    expect(h.entities.get(1)!.x).toBeGreaterThan(100 + 100); // where Ada last saw bob, not a respawn
  });

  it('conditioner: a bad network for a test or a demo', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'host');
    // Any NetTransport can be wrapped; sessionTransport(session) in a browser.
    const bad = new ConditionedTransport(net.hostTransport(), {
      conditions: { latencyMs: 100, jitterMs: 20, loss: 0.1, duplicate: 0.01, reorder: 0.02 },
      scheduler: clock,
    });
    bad.setConditions({ loss: 0 }); // live, e.g. from a debug panel
    expect(bad.conditions).toMatchObject({ latencyMs: 100, loss: 0 });
  });

  it('lag compensation: judge a client’s action in the world it saw', () => {
    const lag = new LagCompensator(schema, { tickRate: 60 }); // rewinds at most 200 ms
    for (let tick = 1; tick <= 60; tick++) lag.record(tick, new Map([[7, { x: tick * 5, y: 0 }]]));
    // host.viewTick(playerId) says which (fractional) tick the client was drawing.
    const target = lag.at(7, 50.5, 60);
    expect(target).toEqual({ x: 252.5, y: 0 });
  });

  it('validation: speed and teleport checks with a decaying score', () => {
    // NetHost does this for you with `validation: { rules, position, verdict }`.
    const v = new Validator({ maxSpeed: 200, maxTeleport: 40, threshold: 10 });
    v.checkMove('p2', { x: 0, y: 0 }, 1 / 60, 1, 0);
    const violation = v.checkMove('p2', { x: 90, y: 0 }, 1 / 60, 2, 16);
    expect(violation).toMatchObject({ kind: 'teleport', score: 5 });
  });

  it('state hash: name the first tick two runs disagree on', () => {
    // host.hashLog and client.hashLog fill themselves when stateHash is on (the default).
    const host = new HashLog();
    const client = new HashLog();
    [1, 2, 3].forEach((t) => host.record(t, t));
    [1, 2, 4].forEach((h, k) => client.record(k + 1, h));
    expect(firstDivergentTick(host, client)).toBe(3);
  });
});
