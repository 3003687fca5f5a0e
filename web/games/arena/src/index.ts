// The demo game: a small 2D arena where players push a ball into goals.
// Written only against the packages' public API (@hostrelay/sdk and
// @hostrelay/netcode), the way any game on hostrelay would be. It is the
// SDK's Game for rooms whose mode is "Arena": the lobby mounts it when the
// host presses Start.
import './game.css';
import {
  ConditionedTransport,
  NO_CONDITIONS,
  sessionTransport,
  type Conditions,
  type Entity,
  type ReadonlyEntityMap,
} from '@hostrelay/netcode';
import type { Game, GameContext, RunningGame } from '@hostrelay/sdk';
import { autopilot } from './autopilot';
import { ClientGame } from './client-game';
import { DebugPanel } from './debug-panel';
import { HostGame } from './host-game';
import { Keyboard } from './keyboard';
import { Netgraph } from './netgraph';
import { arenaStage, Renderer, teamName } from './render';
import { BALL_ID, teamOf, type ArenaInput, type Field } from './schema';
import { publishSpectatorStream } from './spectator';
import { publishGameHooks } from './test-hooks';
import { TouchControls } from './touch-controls';
import { mergeInputs } from './touch-input';

export interface ArenaOptions extends GameContext {
  /** Start with the network conditioner set (default: off); the debug panel changes it live. */
  conditions?: Partial<Conditions>;
  /** Let a bot play for this tab (default false); a checkbox under the arena toggles it. */
  autopilot?: boolean;
}

/** The arena as the SDK's Game: the lobby app mounts it for rooms made with mode "Arena". */
export const arena: Game = {
  mode: 'Arena',
  mount: (ctx) => mountArena(ctx),
};

export type { HostrelayGameHooks, HostrelayWatchHooks } from './test-hooks';
export { SPECTATOR_RATE, watchArena, type WatchArenaOptions, type WatchedArena } from './spectator';

/** Frames of ball positions a client keeps for window.hostrelayGame (about 20 s at 60 fps; e2e build only). */
const SAMPLES = 1200;

/**
 * Mounts the arena into `container` and starts playing over the session's
 * data channels: the host runs the world, clients predict and interpolate.
 *
 * @example
 * session.on('gameStarted', () => {
 *   const game = mountArena({ session, container: document.querySelector('#game')! });
 *   session.on('closed', () => game.stop());
 * });
 */
export function mountArena(opts: ArenaOptions): RunningGame {
  const { session, container } = opts;
  const conditions: Conditions = { ...NO_CONDITIONS, ...opts.conditions };
  const transport = new ConditionedTransport(sessionTransport(session), { conditions });
  const keyboard = new Keyboard();
  let pilot = opts.autopilot ?? false;
  let me: Readonly<Entity<Field>> | null = null;
  let ball: Readonly<Entity<Field>> | null = null;
  const readInput = (): ArenaInput => {
    // Both read every tick, so a Kick tapped while the autopilot plays is not kept for later.
    const held = mergeInputs(keyboard.read(), touch.read());
    return pilot ? autopilot({ me: me && { x: me.x, y: me.y, team: me.team }, ball }) : held;
  };

  // Elements: the view (the field, the touch controls, the netgraph), a bar, the conditioner panel.
  const { root, stage, canvas } = arenaStage('game');
  const netgraph = new Netgraph();
  // The touch controls and the netgraph sit under the arena, so they never hide play (game.css).
  const view = document.createElement('div');
  view.className = 'hr-game-view';
  const help = document.createElement('span');
  help.className = 'hr-game-help';
  // A phone gets the stick and Kick and is told about them, not about keys it has not got.
  const touchLook = (on: boolean): void => {
    help.textContent = on ? 'Drag to move, tap Kick.' : 'Move with arrows or WASD, kick with space.';
    root.classList.toggle('hr-game-touch', on);
  };
  const touch = new TouchControls(touchLook);
  touchLook(touch.active);
  view.append(stage, touch.el, netgraph.el);
  const bar = document.createElement('div');
  bar.className = 'hr-game-bar';
  const status = document.createElement('span');
  status.className = 'hr-game-status';
  status.setAttribute('role', 'status');
  const pilotLabel = document.createElement('label');
  const pilotBox = document.createElement('input');
  pilotBox.type = 'checkbox';
  pilotBox.id = 'hr-autopilot';
  pilotBox.checked = pilot;
  pilotBox.addEventListener('change', () => (pilot = pilotBox.checked));
  pilotLabel.append(pilotBox, ' Autopilot');
  const graphLabel = document.createElement('label');
  const graphBox = document.createElement('input');
  graphBox.type = 'checkbox';
  graphBox.id = 'hr-netgraph';
  graphBox.checked = true;
  graphBox.addEventListener('change', () => (netgraph.el.hidden = !graphBox.checked));
  graphLabel.append(graphBox, ' Netgraph');
  const toggles = document.createElement('span');
  toggles.className = 'hr-game-toggles';
  toggles.append(pilotLabel, graphLabel);
  bar.append(status, help, toggles);
  const panel = new DebugPanel(conditions, (c) => transport.setConditions(c));
  root.append(view, bar, panel.el);
  container.append(root);
  const renderer = new Renderer(canvas);

  const nameOf = (id: string): string => session.players.find((p) => p.id === id)?.name ?? id;
  // A client becomes the host when the old host's tab goes away (rooms made
  // with migrate): promote() swaps the client game for a host game that
  // continues from the newest snapshot this tab received.
  let host: HostGame | null = session.role === 'host' ? new HostGame(transport, readInput) : null;
  let client: ClientGame | null = host ? null : new ClientGame(transport, readInput);
  const samples: [number, number, number, number, number][] = [];
  const frames: [number, number, number, number, number, number][] = [];
  let ended: string | null = null;
  let promoted = false;
  // Why the host we follow went, as its playerLeft said (it comes before hostChanged).
  let hostGone = 'left';
  const offLeft = session.on('playerLeft', (p, reason) => {
    if (p.id === session.hostId) hostGone = reason === 'unresponsive' ? 'stopped responding' : 'left';
  });
  const promote = (): void => {
    if (!client || host) return;
    const handover = client.net.handover() ?? undefined;
    client.stop();
    client = null;
    host = new HostGame(transport, readInput, undefined, true, handover);
    promoted = true;
    samples.length = 0;
    host.start();
    setStatus();
  };
  const offHost = client?.net.on('hostChanged', (id) => {
    if (id === transport.localId) promote();
  });

  const names = (): Map<number, string> => {
    const players = host ? host.net.players : (client?.net.players ?? []);
    return new Map(players.map((p) => [p.slot, nameOf(p.id)]));
  };
  const setStatus = (): void => {
    const slot = host ? (host.net.players.find((p) => p.id === transport.localId)?.slot ?? 0) : client?.net.slot;
    const team = slot === null || slot === undefined ? '' : `You play for ${teamName(teamOf(slot))}. `;
    const kicked = client?.net.kicked;
    const lead = promoted ? `The host ${hostGone}: you host the game now. ` : '';
    status.textContent =
      ended ?? (kicked ? `Kicked by the host: ${kicked}` : slot === null ? 'Connecting to the host…' : lead + team);
  };

  let frame = 0;
  let drawn: ReadonlyEntityMap<Field> = new Map();
  const draw = (): void => {
    if (host) {
      const entities = host.view();
      const localId = host.net.players.find((p) => p.id === transport.localId)?.slot ?? 0;
      me = entities.get(localId) ?? null;
      ball = entities.get(BALL_ID) ?? null;
      drawn = entities;
      renderer.draw({ entities, localId, names: names() });
    } else if (client) {
      const v = client.view();
      drawn = v.entities;
      me = v.local;
      ball = v.entities.get(BALL_ID) ?? null;
      if (import.meta.env.MODE === 'e2e' && ball) {
        // A predicted ball is drawn in the client's present, the rest in the host's past.
        const predicted = v.predicted.has(BALL_ID);
        samples.push([predicted ? v.predictedTick : v.renderTick, ball.x, ball.y, predicted ? 1 : 0, v.sliding.get(BALL_ID) ?? 0]);
        if (samples.length > SAMPLES) samples.shift();
        if (me) {
          frames.push([performance.now(), me.x, me.y, ball.x, ball.y, predicted ? 1 : 0]);
          if (frames.length > SAMPLES) frames.shift();
        }
      }
      renderer.draw({ entities: v.entities, localId: v.localId, names: names() });
    }
    frame = requestAnimationFrame(draw);
  };

  const statsTimer = window.setInterval(() => {
    setStatus();
    if (host) {
      netgraph.showHost(
        host.net.tick,
        host.peerStats().map((p) => ({ name: nameOf(p.id), stats: p.stats })),
      );
    } else if (client) {
      netgraph.showClient(client.net.stats());
    }
  }, 250);

  const offClosed = session.on('closed', (reason) => {
    ended =
      reason === 'host_left'
        ? 'The host left: the game is over.'
        : reason === 'unresponsive'
          ? 'Your tab stopped responding, so another player took over as host.'
          : `The game ended (${reason}).`;
    setStatus();
    host?.stop();
    client?.stop();
  });

  // window.hostrelayGame, in the e2e build only: elsewhere the condition is a
  // constant false and the bundle leaves the hooks out.
  let unpublish: (() => void) | null = null;
  if (import.meta.env.MODE === 'e2e') {
    unpublish = publishGameHooks({
      get role() {
        return host ? 'host' : 'client';
      },
      ready: () =>
        host
          ? host.net.players.length - host.net.reconnecting.length > 1
          : !!client && client.net.synced && me !== null && ball !== null,
      hostId: () => transport.hostId,
      localId: () =>
        host ? (host.net.players.find((p) => p.id === transport.localId)?.slot ?? null) : (client?.net.slot ?? null),
      promoted: () => promoted,
      entities: () => [...drawn].map(([id, e]) => [id, { ...e }]),
      placeBall: (x, y, vx, vy) => {
        if (host) Object.assign(host.arena.ball, { x, y, vx, vy });
        return host !== null;
      },
      tick: () => (host ? host.net.tick : (samples[samples.length - 1]?.[0] ?? 0)),
      ballHistory: () => host?.ballHistory() ?? [],
      ballSamples: () => (host ? (ball ? [[host.net.tick, ball.x, ball.y, 0, 0]] : []) : [...samples]),
      frames: () => [...frames],
      clientStats: () => client?.net.stats() ?? null,
      hostStats: () => host?.peerStats() ?? [],
      setAutopilot: (on) => {
        pilot = on;
        pilotBox.checked = on;
      },
      setConditions: (c) => transport.setConditions(c),
      conditioner: () => ({ conditions: { ...transport.conditions }, stats: transport.stats }),
    });
  }

  // Spectators: whoever hosts (the first host, or a client promoted since)
  // publishes the world as keyframes; the server delays and fans them out.
  const stopPublishing = publishSpectatorStream(session, () =>
    host ? { tick: host.net.tick, entities: new Map(host.arena.entities()), names: names() } : null,
  );

  host?.start();
  client?.start();
  setStatus();
  frame = requestAnimationFrame(draw);

  let stopped = false;
  return {
    stats: () => ({ rttMs: client?.net.stats().rttMs ?? null }),
    stop() {
      if (stopped) return;
      stopped = true;
      cancelAnimationFrame(frame);
      clearInterval(statsTimer);
      stopPublishing();
      offClosed();
      offHost?.();
      offLeft();
      host?.stop();
      client?.stop();
      transport.dispose();
      keyboard.dispose();
      touch.dispose();
      root.remove();
      unpublish?.();
    },
  };
}
