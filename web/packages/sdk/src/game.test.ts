import { describe, expect, it } from 'vitest';
import { gameFor, type Game } from './game.js';

const game = (mode: string): Game => ({ mode, mount: () => ({ stop: () => undefined, stats: () => ({ rttMs: null }) }) });

describe('gameFor', () => {
  const arena = game('Arena');
  const pointer = game('Pointer demo');
  const fallback = game('Fallback');
  it('picks the game whose mode the room names', () => {
    expect(gameFor([arena, pointer], 'Arena', fallback)).toBe(arena);
    expect(gameFor([arena, pointer], 'Pointer demo', fallback)).toBe(pointer);
  });
  it('falls back for a mode no game plays, matching case exactly as the server keeps it', () => {
    expect(gameFor([arena, pointer], 'Rollback racer', fallback)).toBe(fallback);
    expect(gameFor([arena, pointer], 'arena', fallback)).toBe(fallback);
    expect(gameFor([], 'Arena', fallback)).toBe(fallback);
  });
});
