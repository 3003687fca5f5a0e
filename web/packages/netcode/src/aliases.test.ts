// One name for one idea on both sides: readInput (the local player's input)
// and frame() (what to draw), with the first names (NetHost's localInput,
// both view()s) still honoured.
import { describe, expect, it } from 'vitest';
import { buttonsCodec, NetClient, NetHost, Schema, SimClock, SimNetwork, type Buttons, type Entity, type NetGame, type NetView } from './index.js';

const schema = Schema.define({ x: { precision: 1 / 16 } });
type Field = (typeof schema)['fields'][number];
type Input = Buttons<'right'>;
const game: NetGame<Input, Field> = { schema, input: buttonsCodec(['right'] as const), tickRate: 60 };
const right = (): Input => ({ right: true });
const idle = (): Input => ({ right: false });

function setup(inputs: { readInput?: () => Input; localInput?: () => Input }) {
  const clock = new SimClock();
  const net = new SimNetwork(clock, 'host');
  const world = new Map<string, { slot: number; e: Entity<Field> }>();
  const host = new NetHost<Input, Field>({
    transport: net.hostTransport(),
    game,
    scheduler: clock,
    ...inputs,
    step: ({ inputs: got, dt }) => {
      for (const [id, i] of got) {
        const p = world.get(id);
        if (p && i.right) p.e.x += 60 * dt;
      }
    },
    capture: () => [...world.values()].map((p) => [p.slot, p.e] as const),
  });
  host.on('playerJoin', (p) => world.set(p.id, { slot: p.slot, e: { x: 0 } }));
  host.start();
  return { clock, net, host, world };
}

describe('readInput on the host', () => {
  it('makes the host a player, like localInput did', () => {
    for (const inputs of [{ readInput: right }, { localInput: right }]) {
      const { clock, host, world } = setup(inputs);
      for (let f = 0; f < 60; f++) clock.advance(1000 / 60);
      expect(host.players.map((p) => [p.id, p.slot])).toEqual([['host', 0]]);
      expect(world.get('host')!.e.x).toBeGreaterThan(50);
    }
  });

  it('wins over localInput when both are set', () => {
    const { clock, world } = setup({ readInput: right, localInput: idle });
    for (let f = 0; f < 30; f++) clock.advance(1000 / 60);
    expect(world.get('host')!.e.x).toBeGreaterThan(20);
  });
});

describe('frame()', () => {
  it('has the same shape on host and client, and view() still draws the same world', () => {
    const { clock, net, host } = setup({ readInput: right });
    const client = new NetClient<Input, Field>({ transport: net.addClient('grace', { latencyMs: 20 }), game, scheduler: clock, readInput: idle });
    client.start();
    for (let f = 0; f < 60; f++) clock.advance(1000 / 60);

    const views: NetView<Field>[] = [host.frame(), client.frame()];
    for (const v of views) {
      expect([...v.entities.keys()].sort()).toEqual([0, 1]);
      expect(v.renderTick).toBeGreaterThan(30);
    }
    expect(host.frame().renderTick).toBeGreaterThan(client.frame().renderTick); // the client draws the host's past
    expect(new Map(host.view())).toEqual(new Map(host.frame().entities));
    expect([...client.view().entities.keys()]).toEqual([...client.frame().entities.keys()]);
    expect(client.frame().localId).toBe(client.slot);
  });
});
