import { arena } from '@hostrelay/game-arena';
import { duelLockstep, duelRollback } from '@hostrelay/game-duel';
import { pointer } from '@hostrelay/game-pointer';
import { MAX_PLAYERS } from '@hostrelay/protocol';
import { gameFor, type Game } from '@hostrelay/sdk';

/** The games the create form offers, by mode; the first is the default. */
export const GAMES: readonly Game[] = [arena, duelRollback, duelLockstep, pointer];

/**
 * The game a room plays. A room whose mode names none of ours (one a
 * native client made) plays the pointer demo: the game hostrelay-bot
 * speaks, so such a room still starts.
 */
export function gameOf(mode: string): Game {
  return gameFor(GAMES, mode, pointer);
}

/** The most players a room of this mode may be made for: the game's own cap, else the protocol's. */
export function maxPlayersOf(mode: string): number {
  return Math.min(gameOf(mode).maxPlayers ?? MAX_PLAYERS, MAX_PLAYERS);
}
