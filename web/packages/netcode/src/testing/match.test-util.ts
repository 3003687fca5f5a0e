// A whole match on simulated time: a host (who also plays), clients behind
// conditioned links, frames drawn at a fixed rate, and everything the tests
// want to check recorded as it happens.
import { NetClient, type ClientView } from '../client/client.js';
import type { Correction } from '../client/prediction.js';
import { NetHost, type HostValidation } from '../host/host.js';
import type { Conditions } from '../transport/conditioner.js';
import type { ConditionedTransport } from '../transport/conditioner.js';
import { moveMover, moverCodec, moverGame, MoverWorld, scriptedInput, type MoverField, type MoverInput } from './movers.test-util.js';
import { SimClock } from './sim-clock.js';
import { SimNetwork } from './sim-network.js';

export interface MatchClientOptions {
  conditions?: Partial<Conditions>;
  seed?: number;
  input?: () => MoverInput;
}

export interface MatchOptions {
  clients: MatchClientOptions[];
  fps?: number;
  snapshotRate?: number;
  deltaCompression?: boolean;
  validation?: HostValidation;
  smoothingMs?: number;
}

export interface MatchClient {
  id: string;
  client: NetClient<MoverInput, MoverField>;
  transport: ConditionedTransport;
  /** Every input the client produced, in order: index k is sequence k + 1. */
  produced: MoverInput[];
  /** Sequences the host applied for this client, in the order it applied them. */
  applied: number[];
  /** Applied sequences whose content differed from what the client produced. */
  wrongContent: number;
  corrections: Correction[];
  /** Per-frame visible correction of the local player. */
  visible: number[];
  frames: number;
  dryFrames: number;
  desyncs: number;
  lastView: ClientView<MoverField> | null;
}

const key = (i: MoverInput): number => {
  const b = new Uint8Array(1);
  moverCodec.write(i, b, 0);
  return b[0]!;
};

export function setupMatch(o: MatchOptions) {
  const clock = new SimClock();
  const net = new SimNetwork(clock, 'host');
  const world = new MoverWorld();
  let tickInputs: ReadonlyMap<string, MoverInput> = new Map();
  const host = new NetHost<MoverInput, MoverField>({
    transport: net.hostTransport(),
    game: moverGame,
    scheduler: clock,
    localInput: scriptedInput(999),
    snapshotRate: o.snapshotRate,
    deltaCompression: o.deltaCompression,
    validation: o.validation,
    step: (t) => {
      tickInputs = t.inputs;
      world.step(t);
    },
    capture: () => world.entities(),
  });
  host.on('playerJoin', (p) => world.spawn(p.id, p.slot));
  host.on('playerLeave', (p) => world.remove(p.id));
  host.start();

  const clients: MatchClient[] = o.clients.map((c, i) => {
    const id = `c${i + 1}`;
    const transport = net.addClient(id, c.conditions ?? {}, c.seed ?? 100 + i);
    const script = c.input ?? scriptedInput(i + 1);
    const produced: MoverInput[] = [];
    const client = new NetClient<MoverInput, MoverField>({
      transport,
      game: moverGame,
      scheduler: clock,
      readInput: () => {
        const input = script();
        produced.push(input);
        return input;
      },
      predict: moveMover,
      smoothFields: ['x', 'y'],
      smoothingMs: o.smoothingMs,
    });
    const mc: MatchClient = {
      id,
      client,
      transport,
      produced,
      applied: [],
      wrongContent: 0,
      corrections: [],
      visible: [],
      frames: 0,
      dryFrames: 0,
      desyncs: 0,
      lastView: null,
    };
    client.on('correction', (corr) => mc.corrections.push(corr));
    client.on('desync', () => mc.desyncs++);
    client.start();
    return mc;
  });
  const byId = new Map(clients.map((c) => [c.id, c]));
  host.on('inputApplied', (id, seq) => {
    const mc = byId.get(id);
    if (!mc) return;
    mc.applied.push(seq);
    const sent = mc.produced[seq - 1];
    const got = tickInputs.get(id);
    if (!sent || !got || key(sent) !== key(got)) mc.wrongContent++;
  });

  const frameMs = 1000 / (o.fps ?? 60);
  let frameClock = 0;
  /** Runs the match for ms of simulated time, drawing each client's frames. */
  const run = (ms: number): void => {
    const end = clock.now() + ms;
    while (clock.now() < end) {
      // Frames land on whole ms like a display's vsync would not: keep the fraction.
      frameClock += frameMs;
      clock.advance(Math.max(0, frameClock - clock.now()));
      host.update();
      for (const mc of clients) {
        if (mc.client.kicked !== null) continue;
        const v = mc.client.view();
        mc.lastView = v;
        if (v.local) {
          mc.frames++;
          if (v.dry) mc.dryFrames++;
          mc.visible.push(v.visibleCorrection);
        }
      }
    }
  };
  return { clock, net, host, world, clients, run };
}
