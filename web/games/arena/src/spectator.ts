// The arena for spectators: the host publishes the whole world as a keyframe
// on the room's spectator stream, and watchArena draws it for someone with
// no seat. The server holds each frame for its spectator delay (2 s by
// default), so the view is that far behind the players by design; within
// that, it plays the frames back at the host's tick rate and interpolates
// between them, so 10 frames a second look like 60.
import type { Entity, ReadonlyEntityMap } from '@hostrelay/netcode';
import type { RoomSession, SpectatorSession } from '@hostrelay/sdk';
import { arenaStage, Renderer } from './render';
import { arenaGame, BALL_ID, schema, type Field } from './schema';
import { publishWatchHooks } from './test-hooks';

/** Keyframes a second the host sends: every 100 ms, under the server's 20 a second per room. */
export const SPECTATOR_RATE = 10;

const VERSION = 1;
const FIELDS = schema.fields;
/** A player name's bytes at most in a keyframe (32 runes of up to 4 bytes). */
const MAX_NAME_BYTES = 128;
const TICK_RATE = arenaGame.tickRate ?? 60;
/** How far behind the newest keyframe playback runs: one and a half frame intervals, so the next is usually there. */
const PLAYBACK_LAG_TICKS = Math.ceil((1.5 * TICK_RATE) / SPECTATOR_RATE);

/** One published moment: the host's tick, every entity, and the players' names by slot. */
export interface SpectatorKeyframe {
  tick: number;
  entities: ReadonlyEntityMap<Field>;
  names: ReadonlyMap<number, string>;
}

/**
 * Encodes a keyframe: version, tick (u32), then entities (u16 count; each
 * id u16 and every field as float32 in schema order), then names (u8 count;
 * each slot u8, length u8, UTF-8). About 600 bytes for 16 players.
 */
export function encodeKeyframe(k: SpectatorKeyframe): Uint8Array {
  const enc = new TextEncoder();
  const names = [...k.names].map(([slot, name]) => [slot, enc.encode(name).slice(0, MAX_NAME_BYTES)] as const);
  const size = 1 + 4 + 2 + k.entities.size * (2 + 4 * FIELDS.length) + 1 + names.reduce((n, [, b]) => n + 2 + b.length, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  view.setUint8(at, VERSION);
  view.setUint32((at += 1), k.tick >>> 0);
  view.setUint16((at += 4), k.entities.size);
  at += 2;
  for (const [id, e] of k.entities) {
    view.setUint16(at, id);
    at += 2;
    for (const f of FIELDS) {
      view.setFloat32(at, e[f]);
      at += 4;
    }
  }
  view.setUint8(at++, names.length);
  for (const [slot, bytes] of names) {
    view.setUint8(at++, slot);
    view.setUint8(at++, bytes.length);
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

/** Decodes a keyframe; null for bytes that are not one (a newer host's, or garbage). */
export function decodeKeyframe(data: Uint8Array): SpectatorKeyframe | null {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const dec = new TextDecoder();
  try {
    if (view.getUint8(0) !== VERSION) return null;
    const tick = view.getUint32(1);
    const count = view.getUint16(5);
    let at = 7;
    const entities = new Map<number, Entity<Field>>();
    for (let i = 0; i < count; i++) {
      const id = view.getUint16(at);
      at += 2;
      const e = {} as Entity<Field>;
      for (const f of FIELDS) {
        e[f] = view.getFloat32(at);
        at += 4;
      }
      entities.set(id, e);
    }
    const names = new Map<number, string>();
    const n = view.getUint8(at++);
    for (let i = 0; i < n; i++) {
      const slot = view.getUint8(at++);
      const len = view.getUint8(at++);
      if (at + len > data.length) return null;
      names.set(slot, dec.decode(data.subarray(at, at + len)));
      at += len;
    }
    return { tick, entities, names };
  } catch {
    return null; // ran off the end: a RangeError from DataView
  }
}

/**
 * Publishes the host's world on the room's spectator stream, SPECTATOR_RATE
 * keyframes a second, whether or not anyone watches: the SDK does not say
 * how many spectators a room has, and the cost is one small frame per
 * 100 ms on the lobby WebSocket (about 6 KB/s for a full room), whatever the
 * audience. Returns a function that stops it.
 */
/** What publishing needs of the session: the host's view of it and its spectator stream. */
export type SpectatorPublisher = Pick<RoomSession, 'closed' | 'role' | 'spectators' | 'sendSpectatorFrame' | 'on'>;

export function publishSpectatorStream(session: SpectatorPublisher, capture: () => SpectatorKeyframe | null): () => void {
  const publish = (): void => {
    // Nobody watching: about 6 KB/s over the host's WebSocket saved. The
    // server tells the count at most every SPECTATOR_COUNT_INTERVAL_MS.
    if (session.closed || session.role !== 'host' || session.spectators === 0) return;
    const k = capture();
    if (!k) return;
    try {
      session.sendSpectatorFrame(encodeKeyframe(k), { keyframe: true });
    } catch {
      // Refused locally (the session just closed): the next tick tries again or stops.
    }
  };
  const timer = setInterval(publish, 1000 / SPECTATOR_RATE);
  // A first watcher gets a keyframe now, not up to a tick later.
  const off = session.on('spectatorsChanged', (n, previous) => {
    if (previous === 0 && n > 0) publish();
  });
  return () => {
    clearInterval(timer);
    off();
  };
}

export interface WatchArenaOptions {
  spectator: SpectatorSession;
  container: HTMLElement;
}

/** A mounted spectator view. */
export interface WatchedArena {
  /** The newest keyframe's host tick, or null before the first. */
  readonly latestTick: number | null;
  /** The (fractional) host tick on screen. */
  readonly renderTick: number;
  /** Keyframes received. */
  readonly frames: number;
  /** The ball as drawn last, or null. */
  readonly ball: { x: number; y: number } | null;
  stop(): void;
}

/** Keyframes kept for playback: a second and a half of them. */
const KEEP = Math.ceil(1.5 * SPECTATOR_RATE);

/**
 * Draws the arena from a spectator stream into `container`, with the same
 * Renderer the players use (no local player ring).
 */
export function watchArena({ spectator, container }: WatchArenaOptions): WatchedArena {
  const { root, stage, canvas } = arenaStage('the game, as a spectator', 'hr-game hr-game-spectator');
  root.append(stage);
  container.append(root);
  const renderer = new Renderer(canvas);

  // Keyframes by arrival, with the local time each came: playback runs at
  // the host's tick rate from the newest, PLAYBACK_LAG_TICKS behind it.
  const frames: { k: SpectatorKeyframe; at: number }[] = [];
  let count = 0;
  let renderTick = 0;
  let ball: { x: number; y: number } | null = null;
  const offFrame = spectator.on('frame', (data, { key }) => {
    if (!key) return; // the arena sends keyframes only
    const k = decodeKeyframe(data);
    if (!k) return;
    const last = frames[frames.length - 1];
    if (last && k.tick <= last.k.tick) frames.length = 0; // a new host (migration) restarts its ticks
    frames.push({ k, at: performance.now() });
    if (frames.length > KEEP) frames.shift();
    count++;
  });

  const draw = (): void => {
    const newest = frames[frames.length - 1];
    if (newest) {
      const ahead = ((performance.now() - newest.at) / 1000) * TICK_RATE;
      // Never past the newest frame: better to hold still than to guess.
      renderTick = Math.max(frames[0]!.k.tick, Math.min(newest.k.tick, newest.k.tick - PLAYBACK_LAG_TICKS + ahead));
      const entities = interpolate(frames.map((f) => f.k), renderTick);
      const b = entities.get(BALL_ID);
      ball = b ? { x: b.x, y: b.y } : null;
      renderer.draw({ entities, localId: null, names: newestNames(frames.map((f) => f.k)) });
    }
    raf = requestAnimationFrame(draw);
  };
  let raf = requestAnimationFrame(draw);

  // window.hostrelayWatch in the e2e build only (a constant false elsewhere).
  const unpublish =
    import.meta.env.MODE === 'e2e'
      ? publishWatchHooks({
          frames: () => count,
          latestTick: () => frames[frames.length - 1]?.k.tick ?? null,
          renderTick: () => renderTick,
          ball: () => ball,
        })
      : null;

  let stopped = false;
  return {
    get latestTick() {
      return frames[frames.length - 1]?.k.tick ?? null;
    },
    get renderTick() {
      return renderTick;
    },
    get frames() {
      return count;
    },
    get ball() {
      return ball;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      cancelAnimationFrame(raf);
      offFrame();
      unpublish?.();
      root.remove();
    },
  };
}

function newestNames(frames: readonly SpectatorKeyframe[]): ReadonlyMap<number, string> {
  return frames[frames.length - 1]?.names ?? new Map();
}

/**
 * The world at a fractional tick between two keyframes: positions linear,
 * everything else (kind, team, scores) from the earlier one. An entity in
 * only one of the two is drawn as that one has it.
 */
export function interpolate(frames: readonly SpectatorKeyframe[], tick: number): ReadonlyEntityMap<Field> {
  const i = frames.findIndex((f) => f.tick > tick);
  if (i <= 0) return (i === 0 ? frames[0] : frames[frames.length - 1])?.entities ?? new Map();
  const a = frames[i - 1]!;
  const b = frames[i]!;
  const t = (tick - a.tick) / (b.tick - a.tick);
  const out = new Map<number, Entity<Field>>();
  for (const [id, ea] of a.entities) {
    const eb = b.entities.get(id);
    if (!eb) {
      out.set(id, { ...ea });
      continue;
    }
    out.set(id, { ...ea, x: ea.x + (eb.x - ea.x) * t, y: ea.y + (eb.y - ea.y) * t });
  }
  return out;
}
