import type { RoomSession } from '../src/sdk';

/** What the lobby hands the game when the host starts it. */
export interface MountGameOptions {
  session: RoomSession;
  container: HTMLElement;
}

/** A mounted game; the lobby disposes it when the room ends. */
export interface GameHandle {
  dispose(): void;
}

/** The contract web/game/index.ts fulfils. */
export type MountGame = (opts: MountGameOptions) => GameHandle;

// The game the lobby mounts on gameStarted. Until web/game exists it is the
// pointer demo; switching to the real game is this one line:
//   export { mountGame } from '../game';
export { mountGame } from './pointer-game';
