import type { RoomSession } from './room-session.js';

// The one contract between a page that runs rooms (the lobby app, or your
// own) and the games played in them. A game is started by the room's host
// pressing Start (gameStarted), or at once when a player joins a room whose
// game is under way; the page mounts the game the room's mode names and
// stops it when the room ends. Everything else (host or client, a host
// change mid-game, the wire format) is the game's own business, done over
// `session`.

/** What a game is given when it starts. */
export interface GameContext {
  /** The room: this tab's role, the players, and the data channels game packets go over. */
  readonly session: RoomSession;
  /** The element to draw into. The game owns the children it adds and removes them on stop(). */
  readonly container: HTMLElement;
}

/** Figures a running game reports to the page around it (shown in the room, read by tests). */
export interface GameStats {
  /** Round trip to the host over the game channel in ms; null for the host itself, or until measured. */
  readonly rttMs: number | null;
}

/** A game in progress, as mount() returns it. */
export interface RunningGame {
  /**
   * Stops the game: its timers, listeners and elements go; the session is
   * left open (the page closes it). Calling it again does nothing.
   */
  stop(): void;
  stats(): GameStats;
}

/** A game a page can start in a room. */
export interface Game {
  /** The room mode it plays (RoomInfo.mode, chosen when the room is created). */
  readonly mode: string;
  /**
   * The most players it seats, when fewer than a room may hold (a duel: 2).
   * A page caps the rooms it makes for this mode at it, so a third player
   * is told the room is full instead of waiting for a game with no seat.
   */
  readonly maxPlayers?: number;
  /**
   * Starts playing in `ctx.container` over `ctx.session`: as the authority
   * when `session.role` is 'host', as a client otherwise. A game that
   * supports host migration follows `session`'s hostChanged itself.
   */
  mount(ctx: GameContext): RunningGame;
}

/**
 * The game for a room's mode among `games`, or `fallback` (a room made by a
 * client that named a mode this page does not have).
 */
export function gameFor(games: readonly Game[], mode: string, fallback: Game): Game {
  return games.find((g) => g.mode === mode) ?? fallback;
}
