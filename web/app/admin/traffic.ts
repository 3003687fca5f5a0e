import type { Overview } from './api';

// Relayed bandwidth from two polls, on the server's clock. The server's rate
// is the difference of its total since start. The server also counts bytes
// per allocation since it opened; a room's (or player's) rate is the sum,
// over its allocations seen in both polls, of what each relayed in between.
// Summing per allocation (not differencing the room's total) keeps an
// allocation that closed in between from showing as negative traffic.

/** One poll's counters. */
export interface Sample {
  /** Server time in ms. */
  at: number;
  /** Relayed bytes since the server started. */
  total: number;
  /** Relayed bytes by allocation id. */
  bytes: ReadonlyMap<number, number>;
}

export function sampleOf(o: Overview): Sample {
  return {
    at: Date.parse(o.server.now),
    total: o.server.relayedBytesTotal,
    bytes: new Map(o.allocations.map((a) => [a.id, a.relayedBytes])),
  };
}

/** Bytes per second; null until two polls have been seen. */
export interface Rates {
  /** The whole server, allocations that closed in between included. */
  total: number | null;
  /** By room code; a room with no traffic in both polls is absent (0 B/s when total is known). */
  byRoom: ReadonlyMap<string, number>;
  /** By room code + '/' + player id. */
  byPlayer: ReadonlyMap<string, number>;
}

export function ratesBetween(prev: Sample | null, o: Overview): Rates {
  const cur = sampleOf(o);
  const byRoom = new Map<string, number>();
  const byPlayer = new Map<string, number>();
  const seconds = prev === null ? 0 : (cur.at - prev.at) / 1000;
  if (prev === null || !(seconds > 0)) return { total: null, byRoom, byPlayer };
  const total = Math.max(0, cur.total - prev.total) / seconds;
  for (const a of o.allocations) {
    const before = prev.bytes.get(a.id);
    // Outside any room, or opened since the last poll (its rate starts next time).
    if (!a.room || before === undefined) continue;
    const rate = Math.max(0, a.relayedBytes - before) / seconds;
    byRoom.set(a.room, (byRoom.get(a.room) ?? 0) + rate);
    if (a.player) {
      const key = `${a.room}/${a.player}`;
      byPlayer.set(key, (byPlayer.get(key) ?? 0) + rate);
    }
  }
  return { total, byRoom, byPlayer };
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** 0 B, 950 B, 1.2 KB, 34 KB, 5.6 MB: decimal units, as network rates are quoted. */
export function formatBytes(n: number): string {
  let v = Math.max(0, n);
  let u = 0;
  while (v >= 1000 && u < UNITS.length - 1) {
    v /= 1000;
    u++;
  }
  const digits = u === 0 || v >= 10 ? 0 : 1;
  // 999.96 KB rounds to "1000 KB": step up instead.
  if (Number(v.toFixed(digits)) >= 1000 && u < UNITS.length - 1) return `1.0 ${UNITS[u + 1]}`;
  return `${v.toFixed(digits)} ${UNITS[u]}`;
}

export function formatRate(bytesPerSecond: number | null): string {
  return bytesPerSecond === null ? '– B/s' : `${formatBytes(bytesPerSecond)}/s`;
}

/** 45 s, 12 min, 3 h 5 min, 2 d 4 h: two units at most. */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}
