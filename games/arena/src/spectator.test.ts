import { describe, expect, it } from 'vitest';
import { MAX_SPECTATOR_DATA } from '@hostrelay/sdk';
import { Arena } from './arena';
import { BALL_ID, SCORE_ID } from './schema';
import { decodeKeyframe, encodeKeyframe, interpolate, type SpectatorKeyframe } from './spectator';

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
