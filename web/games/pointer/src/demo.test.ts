import { describe, expect, it } from 'vitest';
import { startSpot } from './demo';

describe('startSpot', () => {
  it('gives the first 16 players distinct spots inside the canvas', () => {
    const spots = Array.from({ length: 16 }, (_, i) => startSpot(i));
    for (const p of spots) {
      expect(p.x).toBeGreaterThan(0.1);
      expect(p.x).toBeLessThan(0.9);
      expect(p.y).toBeGreaterThan(0.1);
      expect(p.y).toBeLessThan(0.9);
    }
    // No two markers start within 40 px of each other on the 640×400 canvas.
    for (let i = 0; i < spots.length; i++) {
      for (let j = i + 1; j < spots.length; j++) {
        const a = spots[i]!;
        const b = spots[j]!;
        expect(Math.hypot((a.x - b.x) * 640, (a.y - b.y) * 400), `${i} and ${j}`).toBeGreaterThan(40);
      }
    }
  });
});
