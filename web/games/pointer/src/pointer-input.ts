// Where the player points on the demo's canvas, from a mouse or a finger.
// A mouse moves the marker by hovering; a finger has no hover, so the
// marker jumps to where it lands (pointerdown) and follows the drag.

/** A spot on the canvas, 0–1 across and down. */
export interface Point {
  x: number;
  y: number;
}

/** The box the pointer's client coordinates are measured against (getBoundingClientRect). */
export interface Box {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));

/**
 * The canvas spot under client coordinates (x, y), kept inside the canvas:
 * a captured finger that slides past the edge pins the marker to the edge
 * instead of sending it off the host's canvas. Null for a box with no size
 * (the canvas is not laid out).
 */
export function canvasPoint(x: number, y: number, box: Box): Point | null {
  if (!(box.width > 0) || !(box.height > 0)) return null;
  return { x: clamp01((x - box.left) / box.width), y: clamp01((y - box.top) / box.height) };
}

/** What followPointer needs of the canvas (an HTMLElement has it all). */
export interface PointerSurface extends EventTarget {
  getBoundingClientRect(): Box;
  setPointerCapture?(pointerId: number): void;
}

/**
 * Calls `onPoint` with the canvas spot of every pointerdown and pointermove
 * on `surface`; returns the function that stops listening. A press captures
 * its pointer, so a drag that leaves the canvas keeps steering. The canvas
 * needs touch-action: none, or the browser takes a finger's drag to scroll
 * the page and sends pointercancel instead of moves.
 */
export function followPointer(surface: PointerSurface, onPoint: (p: Point) => void): () => void {
  const at = (e: Event): void => {
    const p = e as PointerEvent;
    const point = canvasPoint(p.clientX, p.clientY, surface.getBoundingClientRect());
    if (point) onPoint(point);
  };
  const down = (e: Event): void => {
    at(e);
    // Capture throws for a pointer that is already gone; the move is still taken.
    try {
      surface.setPointerCapture?.((e as PointerEvent).pointerId);
    } catch {
      /* nothing to capture */
    }
  };
  surface.addEventListener('pointerdown', down);
  surface.addEventListener('pointermove', at);
  return () => {
    surface.removeEventListener('pointerdown', down);
    surface.removeEventListener('pointermove', at);
  };
}
