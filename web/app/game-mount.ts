import { mountGame as mountArena } from '../game';
import type { RoomSession } from '@hostrelay/sdk';
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

// The game the lobby mounts on gameStarted. The arena (web/game) is the demo
// game and the create form's default. Any other mode plays the pointer demo,
// a cursor echoed by the host: the smallest game there is, and the one
// hostrelay-bot speaks, so a room made by a native client still starts.
const ARENA_MODE = 'Arena';

export function mountGame(opts: MountGameOptions): GameHandle {
  return opts.session.room.mode === ARENA_MODE ? mountArena(opts) : mountPointer(opts);
}
