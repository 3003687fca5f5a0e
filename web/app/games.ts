import { MAX_PLAYERS } from '@hostrelay/protocol';
import type { Game } from '@hostrelay/sdk';

/**
 * A game the lobby offers, before its code is loaded: what the forms need
 * (its mode, its seat cap) and how to fetch the rest. The games and the
 * netcode they run on are most of the app's code, and a share link needs
 * none of them until its room plays: each is a chunk of its own, fetched
 * when a room plays it (its mode is known from the join's reply), so the
 * lobby's script is small and the page starts sooner.
 */
export interface GameEntry {
  /** The room mode it plays: equal to the loaded Game's mode. */
  readonly mode: string;
  /** The most players it seats, when fewer than a room may hold: equal to the loaded Game's. */
  readonly maxPlayers?: number;
  /** The game's code; a failed fetch rejects and the next call tries again. */
  load(): Promise<Game>;
}

/** Remembers a load that worked, so a game is fetched and evaluated once; forgets one that failed. */
function once(load: () => Promise<Game>): () => Promise<Game> {
  let loading: Promise<Game> | null = null;
  return () => {
    loading ??= load().catch((err: unknown) => {
      loading = null;
      throw err;
    });
    return loading;
  };
}

const pointer: GameEntry = { mode: 'Pointer demo', load: once(async () => (await import('@hostrelay/game-pointer')).pointer) };

/** The games the create form offers, by mode; the first is the default. */
export const GAMES: readonly GameEntry[] = [
  { mode: 'Arena', load: once(async () => (await import('@hostrelay/game-arena')).arena) },
  { mode: 'Duel (rollback)', maxPlayers: 2, load: once(async () => (await import('@hostrelay/game-duel')).duelRollback) },
  { mode: 'Duel (lockstep)', maxPlayers: 2, load: once(async () => (await import('@hostrelay/game-duel')).duelLockstep) },
  pointer,
];

/**
 * The game a room plays. A room whose mode names none of ours (one a
 * native client made) plays the pointer demo: the game hostrelay-bot
 * speaks, so such a room still starts.
 */
export function gameOf(mode: string): GameEntry {
  return GAMES.find((g) => g.mode === mode) ?? pointer;
}

/** The most players a room of this mode may be made for: the game's own cap, else the protocol's. */
export function maxPlayersOf(mode: string): number {
  return Math.min(gameOf(mode).maxPlayers ?? MAX_PLAYERS, MAX_PLAYERS);
}
