import { describe, expect, it } from 'vitest';
import type { AdminAllocation, Overview } from './api';
import { formatAge, formatBytes, formatRate, ratesBetween, sampleOf } from './traffic';

function poll(atMs: number, allocations: Partial<AdminAllocation>[], relayedBytesTotal = 0): Overview {
  return {
    server: { now: new Date(atMs).toISOString(), relayedBytesTotal } as Overview['server'],
    rooms: [],
    allocations: allocations.map((a, i) => ({
      id: i + 1,
      session: `s${i}`,
      transport: 'udp',
      client: '',
      relay: '',
      createdAt: '',
      relayedBytes: 0,
      ...a,
    })),
  };
}

describe('ratesBetween', () => {
  it('has no rate before a second poll, or for polls at the same server time', () => {
    const first = poll(1000, [{ id: 1, room: 'R', player: 'p1', relayedBytes: 500 }]);
    expect(ratesBetween(null, first).total).toBeNull();
    expect(ratesBetween(sampleOf(first), first).total).toBeNull();
  });

  it('sums per room and per player what each allocation relayed between two polls, over the server time between them', () => {
    const before = poll(
      10_000,
      [
        { id: 1, room: 'R', player: 'p1', relayedBytes: 1_000 },
        { id: 2, room: 'R', player: 'p2', relayedBytes: 0 },
        { id: 3, room: 'S', player: 'p1', relayedBytes: 50 },
        { id: 4, relayedBytes: 0 }, // outside any room
      ],
      90_000,
    );
    const after = poll(
      12_000,
      [
        { id: 1, room: 'R', player: 'p1', relayedBytes: 5_000 },
        { id: 2, room: 'R', player: 'p2', relayedBytes: 2_000 },
        { id: 3, room: 'S', player: 'p1', relayedBytes: 50 },
        { id: 4, relayedBytes: 600 },
      ],
      99_000,
    );
    const r = ratesBetween(sampleOf(before), after);
    // The server's rate is its own total's: allocations outside rooms, and ones that closed, included.
    expect(r.total).toBe(4_500);
    expect(Object.fromEntries(r.byRoom)).toEqual({ R: 3_000, S: 0 });
    expect(Object.fromEntries(r.byPlayer)).toEqual({ 'R/p1': 2_000, 'R/p2': 1_000, 'S/p1': 0 });
  });

  it('does not go negative when an allocation closes, and counts a new one from its next poll', () => {
    // The room's total falls from 9000 to 1200: one allocation closed. Its bytes are not taken away.
    const before = poll(0, [
      { id: 1, room: 'R', player: 'p1', relayedBytes: 8_000 },
      { id: 2, room: 'R', player: 'p2', relayedBytes: 1_000 },
    ]);
    const after = poll(1_000, [
      { id: 2, room: 'R', player: 'p2', relayedBytes: 1_200 },
      { id: 3, room: 'R', player: 'p1', relayedBytes: 700 }, // a new allocation with the same player
    ]);
    const r = ratesBetween(sampleOf(before), after);
    expect(r.byRoom.get('R')).toBe(200);
    expect(r.byPlayer.get('R/p1')).toBeUndefined();
  });
});

describe('formatting', () => {
  it('writes bytes in decimal units with two or three significant digits', () => {
    expect([0, 950, 999, 1_000, 1_234, 34_000, 999_960, 5_600_000, 2e12].map(formatBytes)).toEqual([
      '0 B',
      '950 B',
      '999 B',
      '1.0 KB',
      '1.2 KB',
      '34 KB',
      '1.0 MB',
      '5.6 MB',
      '2.0 TB',
    ]);
    expect(formatRate(null)).toBe('– B/s');
    expect(formatRate(12_345)).toBe('12 KB/s');
  });

  it('writes ages in at most two units', () => {
    expect([0, 59, 60, 3_599, 3_600, 3_660 + 240, 86_400, 86_400 + 7_200, 90_061].map(formatAge)).toEqual([
      '0 s',
      '59 s',
      '1 min',
      '59 min',
      '1 h',
      '1 h 5 min',
      '1 d',
      '1 d 2 h',
      '1 d 1 h',
    ]);
  });
});
