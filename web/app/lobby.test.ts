import { describe, expect, it } from 'vitest';
import { MAX_PLAYERS } from '@hostrelay/protocol';
import { maxPlayersOf } from './games';
import type { RoomSummary } from '@hostrelay/sdk';
import { nameProblem } from './identity';
import { filterRooms } from './room-filter';

const room = (name: string, host: string): RoomSummary => ({
  code: name.toUpperCase().slice(0, 7).padEnd(7, '2'),
  name,
  host,
  players: 1,
  maxPlayers: 4,
  mode: '',
  hasPassword: false,
  started: false,
  region: '',
});

describe('filterRooms', () => {
  const rooms = [room('Lunch league', 'Ada'), room('Friday ball', 'Bob'), room('Late lunch', 'Grace')];
  it('matches names and hosts, ignoring case and spaces', () => {
    expect(filterRooms(rooms, '  LUNCH ').map((r) => r.name)).toEqual(['Lunch league', 'Late lunch']);
    expect(filterRooms(rooms, 'bob').map((r) => r.name)).toEqual(['Friday ball']);
    expect(filterRooms(rooms, '')).toHaveLength(3);
    expect(filterRooms(rooms, 'zzz')).toEqual([]);
  });
});

describe('nameProblem', () => {
  it('accepts names up to 32 characters and refuses the rest with a sentence', () => {
    expect(nameProblem('Ada')).toBeNull();
    expect(nameProblem('é'.repeat(32))).toBeNull();
    expect(nameProblem('é'.repeat(33))).toMatch(/at most 32/);
    expect(nameProblem('   ')).toMatch(/Pick a name/);
    expect(nameProblem('a\u0007b')).toMatch(/control/);
  });
  it('refuses what others could not see, naming the character, as the server does', () => {
    expect(nameProblem('Host\u200b')).toBe('Names cannot contain invisible characters (U+200B).');
    expect(nameProblem('\u202eTSOH')).toBe('Names cannot contain characters that change the text’s direction (U+202E).');
    expect(nameProblem('\u3164')).toBe('Names cannot contain invisible characters (U+3164).');
    expect(nameProblem('\u0301a')).toBe('Names cannot start with an accent on its own (U+0301).');
    expect(nameProblem('Ada \u2764\ufe0f')).toBeNull();
    expect(nameProblem('H\u043est')).toBeNull(); // a look-alike is the server's to suffix, not ours to refuse
  });
});

describe('maxPlayersOf', () => {
  it('caps a mode at what its game seats, and others at the protocol limit', () => {
    expect(maxPlayersOf('Duel (rollback)')).toBe(2);
    expect(maxPlayersOf('Duel (lockstep)')).toBe(2);
    expect(maxPlayersOf('Arena')).toBe(MAX_PLAYERS);
    expect(maxPlayersOf('a mode no game plays')).toBe(MAX_PLAYERS); // the pointer demo's, uncapped
  });
});
