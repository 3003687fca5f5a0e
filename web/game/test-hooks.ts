// window.hostrelayGame: what the game shows, for tests and for curious
// developers in the console. Read-only views plus the two debug switches.
import type { ClientStats, ConditionerStats, Conditions, HostPeerStats } from '../src/netcode';

export interface HostrelayGameHooks {
  role: 'host' | 'client';
  /** Host: a client is connected. Client: the host's world is on screen and our player is predicted. */
  ready(): boolean;
  /** Host: the last tick run. Client: the (fractional) host tick on screen. */
  tick(): number;
  /** Host: the ball after each recent tick, [tick, x, y]. Client: empty. */
  ballHistory(): [number, number, number][];
  /** Client: the ball as drawn in each recent frame, [render tick, x, y]. Host: the ball as drawn now. */
  ballSamples(): [number, number, number][];
  clientStats(): ClientStats | null;
  hostStats(): { id: string; stats: HostPeerStats }[];
  setAutopilot(on: boolean): void;
  setConditions(c: Partial<Conditions>): void;
  /** What the conditioner is set to, and what it has done so far. */
  conditioner(): { conditions: Conditions; stats: ConditionerStats };
}

declare global {
  interface Window {
    hostrelayGame?: HostrelayGameHooks;
  }
}
