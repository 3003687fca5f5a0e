import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Emitter, MAX_SPECTATOR_DATA, type Role, type RoomSessionEvents, type Unsubscribe } from '@hostrelay/sdk';
import { Arena } from './arena';
import { BALL_ID, SCORE_ID } from './schema';
import {
  decodeKeyframe,
  encodeKeyframe,
  interpolate,
  publishSpectatorStream,
  SPECTATOR_RATE,
  type SpectatorKeyframe,
  type SpectatorPublisher,
} from './spectator';

// The arena's spectator keyframes: the whole world and the names round-trip,
// a full room fits the server's frame limit, and playback interpolates.

function fullRoom(): SpectatorKeyframe {
  const a = new Arena();
  const names = new Map<number, string>();
  for (let slot = 0; slot < 16; slot++) {
    a.join(`p${slot}`, slot);
    names.set(slot, `Ｐlayer ${slot} ✓`.padEnd(32, 'é'));
  }
  return { tick: 123_456, entities: new Map(a.entities()), names };
}

describe('spectator keyframes', () => {
  it('round-trip every entity field and every name', () => {
    const k = fullRoom();
    const back = decodeKeyframe(encodeKeyframe(k));
    expect(back?.tick).toBe(123_456);
    expect(back?.entities).toEqual(new Map([...k.entities].map(([id, e]) => [id, { ...e }])));
    expect(back?.names).toEqual(k.names);
    expect(back?.entities.has(BALL_ID) && back.entities.has(SCORE_ID)).toBe(true);
  });

  it('fit a full room well inside the server limit', () => {
    const size = encodeKeyframe(fullRoom()).length;
    expect(size).toBeLessThan(MAX_SPECTATOR_DATA / 8);
  });

  it('refuse bytes that are not a keyframe', () => {
    const bytes = encodeKeyframe(fullRoom());
    expect(decodeKeyframe(bytes.subarray(0, bytes.length - 3))).toBeNull();
    expect(decodeKeyframe(bytes.subarray(0, 20))).toBeNull();
    expect(decodeKeyframe(new Uint8Array([9, 0, 0]))).toBeNull();
    expect(decodeKeyframe(new Uint8Array(0))).toBeNull();
  });

  it('interpolate positions between keyframes and hold at the ends', () => {
    const ball = (tick: number, x: number): SpectatorKeyframe => ({
      tick,
      entities: new Map([[BALL_ID, { x, y: 10, vx: 0, vy: 0, kind: 2, team: 0, scoreL: 0, scoreR: 0 }]]),
      names: new Map(),
    });
    const frames = [ball(60, 100), ball(66, 160)];
    expect(interpolate(frames, 63).get(BALL_ID)?.x).toBe(130);
    expect(interpolate(frames, 50).get(BALL_ID)?.x).toBe(100);
    expect(interpolate(frames, 70).get(BALL_ID)?.x).toBe(160);
    expect(interpolate([], 70).size).toBe(0);
  });
});

/** The host's side of a room as publishing sees it: a count the server updates, and the frames sent. */
class Host implements SpectatorPublisher {
  closed = false;
  role: Role = 'host';
  spectators = 0;
  readonly sent: { bytes: number; keyframe: boolean }[] = [];
  private readonly events = new Emitter<RoomSessionEvents>();

  on<K extends keyof RoomSessionEvents>(event: K, listener: (...args: RoomSessionEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  sendSpectatorFrame(data: Uint8Array, options: { keyframe?: boolean } = {}): boolean {
    this.sent.push({ bytes: data.byteLength, keyframe: options.keyframe ?? false });
    return true;
  }

  /** The server's roomUpdated with a new count. */
  watchers(n: number): void {
    const previous = this.spectators;
    this.spectators = n;
    this.events.emit('spectatorsChanged', n, previous);
  }
}

describe('publishSpectatorStream', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const frame = (): SpectatorKeyframe => ({ tick: 1, entities: new Map(), names: new Map() });
  const tick = 1000 / SPECTATOR_RATE;

  it('sends nothing while nobody watches, a keyframe at once for the first watcher, then one a tick', () => {
    const host = new Host();
    const stop = publishSpectatorStream(host, frame);
    vi.advanceTimersByTime(10 * tick);
    expect(host.sent).toEqual([]);

    host.watchers(1);
    expect(host.sent).toHaveLength(1); // not a tick later
    expect(host.sent[0]?.keyframe).toBe(true);
    vi.advanceTimersByTime(5 * tick);
    expect(host.sent).toHaveLength(6);

    host.watchers(2); // more watchers: no extra frame
    expect(host.sent).toHaveLength(6);
    host.watchers(0);
    vi.advanceTimersByTime(5 * tick);
    expect(host.sent).toHaveLength(6);
    stop();
  });

  it('sends nothing from a client, a closed session, or after stop()', () => {
    const client = new Host();
    client.role = 'client';
    const stopClient = publishSpectatorStream(client, frame);
    client.watchers(3);
    vi.advanceTimersByTime(5 * tick);
    expect(client.sent).toEqual([]);
    stopClient();

    const host = new Host();
    const stop = publishSpectatorStream(host, frame);
    host.watchers(1);
    stop();
    vi.advanceTimersByTime(5 * tick);
    expect(host.sent).toHaveLength(1);

    const closed = new Host();
    closed.closed = true;
    publishSpectatorStream(closed, frame);
    closed.watchers(1);
    vi.advanceTimersByTime(5 * tick);
    expect(closed.sent).toEqual([]);
  });
});
