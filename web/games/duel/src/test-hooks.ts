// window.hostrelayDuel: what the duel shows, for the end-to-end tests. In
// the e2e build only (vite build --mode e2e): index.ts publishes it behind
// import.meta.env.MODE === 'e2e', so the production bundle has none of it
// (web/scripts/check-bundle.ts checks it).
import type { Conditions, Desync, LockstepMode, LockstepPhase, LockstepStats } from '@hostrelay/netcode';

export interface HostrelayDuelHooks {
  /** The session's mode: the host's choice, on a client once the match has started. */
  mode(): LockstepMode;
  phase(): LockstepPhase;
  /** Why the run failed, or null. */
  failure(): string | null;
  /** Our slot, -1 before the match starts. */
  slot(): number;
  stats(): LockstepStats;
  /** The hash of the state after a confirmed frame (the last 4096), or null. */
  hashAt(frame: number): number | null;
  /** Left and right scores in the newest state. */
  scores(): [number, number];
  desyncs(): Desync[];
  setAutopilot(on: boolean): void;
  setConditions(c: Partial<Conditions>): void;
  /** Seats taken at the newest confirmed frame, by slot. */
  roster(): boolean[];
  /** Switches the match's mode (the host's Mode menu does the same). */
  switchMode(mode: LockstepMode): void;
  /** Moves the ball 1/256 px on this tab only, 20 frames from now: a desync the host must heal. */
  forceDesync(): void;
}

declare global {
  interface Window {
    hostrelayDuel?: HostrelayDuelHooks;
  }
}

export function publishDuelHooks(hooks: HostrelayDuelHooks): () => void {
  window.hostrelayDuel = hooks;
  return () => {
    if (window.hostrelayDuel === hooks) delete window.hostrelayDuel;
  };
}
