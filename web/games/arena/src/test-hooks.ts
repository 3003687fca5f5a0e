// window.hostrelayGame: what the game shows, for the end-to-end tests.
// Read-only views plus the two debug switches. In the e2e build only (vite
// build --mode e2e): index.ts publishes it behind import.meta.env.MODE ===
// 'e2e', so the production bundle has none of it (make web checks it).
import type { ClientStats, ConditionerStats, Conditions, Entity, HostPeerStats } from '@hostrelay/netcode';
import type { Field } from './schema';

export interface HostrelayGameHooks {
  /** Changes from 'client' to 'host' when this tab takes over a game whose host left. */
  readonly role: 'host' | 'client';
  /**
   * Host: a client is connected (not just handed over and still reconnecting).
   * Client: the current host has welcomed us and sent a snapshot, and its world is on screen.
   */
  ready(): boolean;
  /** The player id of the host this game follows. */
  hostId(): string;
  /** The entity this tab's player controls (its slot), null until the host has given it one. */
  localId(): number | null;
  /** This tab became the host during the game (host migration). */
  promoted(): boolean;
  /** Every entity as drawn in the last frame: players by slot, the ball (1000), the score (1001). */
  entities(): [number, Entity<Field>][];
  /** Host only (false elsewhere): puts the ball somewhere with some velocity, to stage a goal. */
  placeBall(x: number, y: number, vx: number, vy: number): boolean;
  /** Host: the last tick run. Client: the (fractional) host tick on screen. */
  tick(): number;
  /** Host: the ball after each recent tick, [tick, x, y]. Client: empty. */
  ballHistory(): [number, number, number][];
  /**
   * Client: the ball as drawn in each recent frame, [tick, x, y, predicted, sliding]:
   * the render tick when interpolated (predicted 0), the client's predicted tick
   * when predicted (1); sliding is how far a correction or a switch between the
   * two still holds it off that tick's place, px. Host: the ball as drawn now.
   */
  ballSamples(): [number, number, number, number, number][];
  /** Client: each recent frame, [performance.now(), our player x, y, the ball x, y, ball predicted 0 or 1]. Host: empty. */
  frames(): [number, number, number, number, number, number][];
  clientStats(): ClientStats | null;
  hostStats(): { id: string; stats: HostPeerStats }[];
  setAutopilot(on: boolean): void;
  setConditions(c: Partial<Conditions>): void;
  /** What the conditioner is set to, and what it has done so far. */
  conditioner(): { conditions: Conditions; stats: ConditionerStats };
}

/** window.hostrelayWatch: the spectator view (watchArena), e2e build only. */
export interface HostrelayWatchHooks {
  /** Keyframes received. */
  frames(): number;
  /** The newest keyframe's host tick, null before the first. */
  latestTick(): number | null;
  /** The host tick on screen (playback runs a little behind the newest keyframe). */
  renderTick(): number;
  /** The ball as drawn last. */
  ball(): { x: number; y: number } | null;
}

declare global {
  interface Window {
    hostrelayGame?: HostrelayGameHooks;
    hostrelayWatch?: HostrelayWatchHooks;
  }
}

/** Publishes the spectator hooks on window; the returned function takes them down (if still ours). */
export function publishWatchHooks(hooks: HostrelayWatchHooks): () => void {
  window.hostrelayWatch = hooks;
  return () => {
    if (window.hostrelayWatch === hooks) delete window.hostrelayWatch;
  };
}

/** Publishes the hooks on window; the returned function takes them down again (if still ours). */
export function publishGameHooks(hooks: HostrelayGameHooks): () => void {
  window.hostrelayGame = hooks;
  return () => {
    if (window.hostrelayGame === hooks) delete window.hostrelayGame;
  };
}
