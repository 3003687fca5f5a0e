import { describe, expect, it } from 'vitest';
import { NetClient } from '../client/client.js';
import { setupMatch } from '../testing/match.test-util.js';
import { moveMover, moverGame, type MoverField, type MoverInput } from '../testing/movers.test-util.js';
import { SimClock } from '../testing/sim-clock.js';
import { SimNetwork } from '../testing/sim-network.js';
import { PacketType } from '../wire/packets.js';
import { NetHost } from './host.js';

describe('NetHost', () => {
  it('gives each player a slot, reuses it after they leave, and keeps every client’s roster current', () => {
    const m = setupMatch({ clients: [{}, {}, {}] });
    m.run(500);
    expect(m.host.players.map((p) => `${p.id}:${p.slot}`)).toEqual(['host:0', 'c1:1', 'c2:2', 'c3:3']);
    expect(m.clients.map((c) => c.client.slot)).toEqual([1, 2, 3]);
    m.net.removeClient('c2');
    m.run(100);
    expect(m.clients[0]!.client.players.map((p) => p.id)).toEqual(['host', 'c1', 'c3']);
    const late = m.net.addClient('c4');
    const c4 = new NetClient<MoverInput, MoverField>({ transport: late, game: moverGame, scheduler: m.clock, readInput: () => moverGame.input.neutral });
    c4.start();
    m.run(200);
    expect(c4.slot).toBe(2);
    expect(m.world.movers.get('c4')?.slot).toBe(2);
  });

  it('welcomes a client whose game starts listening after its channels opened (the lobby mounts games at different moments)', () => {
    const m = setupMatch({ clients: [] });
    const transport = m.net.addClient('late');
    m.run(2000); // the host welcomed 'late' long ago, to nobody
    const client = new NetClient<MoverInput, MoverField>({ transport, game: moverGame, scheduler: m.clock, readInput: () => moverGame.input.neutral, predict: moveMover });
    client.start();
    m.run(200);
    expect(client.slot).toBe(1);
    expect(client.view().local).not.toBeNull();
  });

  it('carries game events both ways on the reliable channel, even at 30 % loss', () => {
    const m = setupMatch({ clients: [{ conditions: { latencyMs: 30, loss: 0.3 } }] });
    const c = m.clients[0]!.client;
    const atHost: string[] = [];
    const atClient: string[] = [];
    m.host.on('event', (id, payload) => atHost.push(`${id}:${payload.join(',')}`));
    c.on('event', (payload) => atClient.push(payload.join(',')));
    m.run(300);
    for (let i = 0; i < 20; i++) {
      c.sendEvent(new Uint8Array([i]));
      m.host.sendEvent(new Uint8Array([100 + i]));
    }
    m.run(500);
    expect(atHost).toEqual(Array.from({ length: 20 }, (_, i) => `c1:${i}`));
    expect(atClient).toEqual(Array.from({ length: 20 }, (_, i) => String(100 + i)));
  });

  it('knows which tick each client was looking at, within the lag-compensation window', () => {
    const m = setupMatch({ clients: [{ conditions: { latencyMs: 50, jitterMs: 10 } }] });
    const behind: number[] = [];
    m.host.on('tick', (tick) => {
      const view = m.host.viewTick('c1');
      if (view !== null && tick > 300) behind.push(((tick - view) * 1000) / 60);
    });
    m.run(8000);
    behind.sort((a, b) => a - b);
    const median = behind[behind.length >> 1]!;
    // One way up (50 ms), the client's interpolation delay (~100 ms) and the input queue (~30 ms).
    expect(median).toBeGreaterThan(120);
    expect(median).toBeLessThan(260);
  });

  it('lets a client detect a snapshot it rebuilt wrongly, by tick', () => {
    const clock = new SimClock();
    const net = new SimNetwork(clock, 'host');
    const mover = moverGame.schema.blank();
    let tick = 0;
    const host = new NetHost<MoverInput, MoverField>({
      transport: net.hostTransport(),
      game: moverGame,
      scheduler: clock,
      deltaCompression: false,
      step: () => {
        tick++;
        mover.x = tick; // one field changes every tick; its delta is the packet's last byte
      },
      capture: () => [[1, mover]],
    });
    host.start();
    const transport = net.addClient('c1');
    // A corrupting middlebox: flips the last byte of snapshot 60.
    const corrupt = {
      ...transport,
      localId: transport.localId,
      hostId: transport.hostId,
      peers: () => transport.peers(),
      send: transport.send.bind(transport),
      dispose: () => transport.dispose(),
      on: ((event: 'message', l: (id: string, data: Uint8Array, ch: 'game' | 'events') => void) =>
        transport.on(event, (id, data, ch) => {
          if (ch === 'game' && data[0] === PacketType.Snapshot && data[3] === 60) data[data.length - 1]! ^= 0x01;
          l(id, data, ch);
        })) as typeof transport.on,
    };
    const client = new NetClient<MoverInput, MoverField>({ transport: corrupt, game: moverGame, scheduler: clock, readInput: () => moverGame.input.neutral, predict: moveMover });
    const desyncs: number[] = [];
    client.on('desync', (t) => desyncs.push(t));
    client.start();
    for (let i = 0; i < 120; i++) clock.advance(1000 / 60);
    expect(desyncs).toEqual([60]);
    expect(client.stats().desyncs).toBe(1);
    expect(host.hashLog.get(60)).not.toBe(client.hashLog.get(60));
  });
});
