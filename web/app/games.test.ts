import { describe, expect, it } from 'vitest';
import { GAMES, gameOf } from './games';

// The catalogue says what the forms show before a game's chunk is loaded;
// the loaded game must be the one it promised.
describe('GAMES', () => {
  it('loads, for each mode, the game that plays it with the seat cap the forms use', async () => {
    for (const entry of GAMES) {
      const game = await entry.load();
      expect(game.mode).toBe(entry.mode);
      expect(game.maxPlayers).toBe(entry.maxPlayers);
      expect(typeof game.mount).toBe('function');
    }
  });
  it('loads a game once, however often it is asked for', async () => {
    const duel = gameOf('Duel (rollback)');
    expect(await duel.load()).toBe(await duel.load());
  });
  it('plays the pointer demo in a room whose mode no game has (one a native client made)', async () => {
    expect(gameOf('Rollback racer').mode).toBe('Pointer demo');
    expect((await gameOf('').load()).mode).toBe('Pointer demo');
  });
});
