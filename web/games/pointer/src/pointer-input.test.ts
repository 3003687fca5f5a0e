import { describe, expect, it } from 'vitest';
import { canvasPoint, followPointer, type Box, type Point, type PointerSurface } from './pointer-input';

const box: Box = { left: 10, top: 100, width: 400, height: 250 };

/** A canvas as followPointer sees it: events, a box, and pointer capture. */
class FakeCanvas extends EventTarget implements PointerSurface {
  captured: number[] = [];
  constructor(private readonly rect: Box) {
    super();
  }
  getBoundingClientRect(): Box {
    return this.rect;
  }
  setPointerCapture(id: number): void {
    this.captured.push(id);
  }
  /** Node has no PointerEvent: an Event with the fields the handler reads. */
  pointer(type: string, clientX: number, clientY: number, pointerId = 1): void {
    this.dispatchEvent(Object.assign(new Event(type), { clientX, clientY, pointerId, pointerType: 'touch' }));
  }
}

describe('canvasPoint', () => {
  it('maps client coordinates to 0–1 across and down the canvas', () => {
    expect(canvasPoint(10, 100, box)).toEqual({ x: 0, y: 0 });
    expect(canvasPoint(210, 225, box)).toEqual({ x: 0.5, y: 0.5 });
    expect(canvasPoint(410, 350, box)).toEqual({ x: 1, y: 1 });
  });

  it('pins a pointer past the edges to the edge', () => {
    expect(canvasPoint(-500, 90, box)).toEqual({ x: 0, y: 0 });
    expect(canvasPoint(411, 351, box)).toEqual({ x: 1, y: 1 });
    expect(canvasPoint(5000, 225, box)).toEqual({ x: 1, y: 0.5 });
  });

  it('gives nothing for a canvas with no size', () => {
    expect(canvasPoint(10, 10, { left: 0, top: 0, width: 0, height: 100 })).toBeNull();
    expect(canvasPoint(10, 10, { left: 0, top: 0, width: 100, height: 0 })).toBeNull();
  });
});

describe('followPointer', () => {
  it('moves the marker where a finger lands, before it moves', () => {
    const canvas = new FakeCanvas(box);
    const seen: Point[] = [];
    followPointer(canvas, (p) => seen.push(p));
    canvas.pointer('pointerdown', 110, 162.5, 7);
    expect(seen).toEqual([{ x: 0.25, y: 0.25 }]);
    expect(canvas.captured).toEqual([7]); // the drag keeps steering off the canvas
  });

  it('follows the drag, pinned to the edge past it, and stops when asked', () => {
    const canvas = new FakeCanvas(box);
    const seen: Point[] = [];
    const stop = followPointer(canvas, (p) => seen.push(p));
    canvas.pointer('pointerdown', 210, 225);
    canvas.pointer('pointermove', 310, 287.5);
    canvas.pointer('pointermove', 900, 287.5);
    expect(seen).toEqual([
      { x: 0.5, y: 0.5 },
      { x: 0.75, y: 0.75 },
      { x: 1, y: 0.75 },
    ]);
    stop();
    canvas.pointer('pointerdown', 10, 100);
    canvas.pointer('pointermove', 10, 100);
    expect(seen).toHaveLength(3);
  });

  it('takes a press whose pointer cannot be captured', () => {
    const canvas = new FakeCanvas(box);
    canvas.setPointerCapture = () => {
      throw new DOMException('gone', 'NotFoundError');
    };
    const seen: Point[] = [];
    followPointer(canvas, (p) => seen.push(p));
    canvas.pointer('pointerdown', 210, 225);
    expect(seen).toEqual([{ x: 0.5, y: 0.5 }]);
  });
});
