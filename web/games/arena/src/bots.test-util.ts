// The arena played by bots on simulated time: the host and every client run
// the real game code (HostGame, ClientGame, autopilot) over the SDK's
// simulated network, each bot steering from what its own tab draws.
import { SimClock, SimNetwork, type Conditions } from '@hostrelay/netcode';
import { autopilot, type PilotView } from './autopilot';
import { ClientGame } from './client-game';
import { HostGame } from './host-game';
import { BALL_ID } from './schema';

export interface ArenaMatchOptions {
  clients: number;
  conditions?: Partial<Conditions>;
  deltaCompression?: boolean;
  seed?: number;
  /** Clients predict the ball near their player (default true, see ClientGame). */
  predictBall?: boolean;
}

export interface ArenaMatchClient {
  id: string;
  game: ClientGame;
  sees: PilotView;
  frames: number;
  dry: number;
  /** Per frame: how far correction smoothing moved the local player. */
  visible: number[];
  /** Per frame: the ball as drawn, [x, y]. */
  balls: [number, number][];
}

export function arenaMatch(o: ArenaMatchOptions) {
  const clock = new SimClock();
  const net = new SimNetwork(clock, 'host');
  let hostSees: PilotView = { me: null, ball: null };
  const host = new HostGame(net.hostTransport(), () => autopilot(hostSees), clock, o.deltaCompression);
  host.start();
  const clients = Array.from({ length: o.clients }, (_, i) => {
    const transport = net.addClient(`c${i + 1}`, o.conditions ?? {}, (o.seed ?? 1) * 1000 + i);
    const c: ArenaMatchClient = {
      id: `c${i + 1}`,
      game: undefined as unknown as ClientGame,
      sees: { me: null, ball: null },
      frames: 0,
      dry: 0,
      visible: [],
      balls: [],
    };
    c.game = new ClientGame(transport, () => autopilot(c.sees), clock, { predictBall: o.predictBall });
    c.game.start();
    return c;
  });
  let frameClock = 0;
  const run = (ms: number): void => {
    const end = clock.now() + ms;
    while (clock.now() < end) {
      frameClock += 1000 / 60;
      clock.advance(Math.max(0, frameClock - clock.now()));
      const hv = host.view();
      const hb = hv.get(BALL_ID);
      const hm = hv.get(0);
      hostSees = { me: hm ? { x: hm.x, y: hm.y, team: hm.team } : null, ball: hb ?? null };
      for (const c of clients) {
        const v = c.game.view();
        const b = v.entities.get(BALL_ID);
        c.sees = { me: v.local ? { x: v.local.x, y: v.local.y, team: v.local.team } : null, ball: b ?? null };
        if (v.local) {
          c.frames++;
          if (v.dry) c.dry++;
          c.visible.push(v.visibleCorrection);
          if (b) c.balls.push([b.x, b.y]);
        }
      }
    }
  };
  return { clock, net, host, clients, run };
}
