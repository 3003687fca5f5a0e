import { mountGame as mountArena } from '../game';
import type { RoomSession } from '../src/sdk';
import { mountGame as mountPointer } from './pointer-game';

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

// The game the lobby mounts on gameStarted. The arena (web/game, issue 4) is
// a two-team game, so rooms in "Teams" mode play it; the other modes keep the
// pointer demo until they have games of their own.
export function mountGame(opts: MountGameOptions): GameHandle {
  return opts.session.room.mode === 'Teams' ? mountArena(opts) : mountPointer(opts);
}
