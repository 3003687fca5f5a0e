import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Resource } from './resource.js';

/** A resource that counts how often it was opened and closed. */
class Counted extends Resource<string> {
  opens = 0;
  closes = 0;
  constructor() {
    super('new');
  }
  protected open(): void {
    this.opens++;
    this.publish(`open ${this.opens}`);
  }
  protected close(): void {
    this.closes++;
    this.publish(`closed ${this.closes}`);
  }
}

describe('Resource', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('opens once through StrictMode’s effect, cleanup, effect', () => {
    const r = new Counted();
    r.retain();
    r.release();
    r.retain();
    vi.runAllTimers();
    expect([r.opens, r.closes]).toEqual([1, 0]);
    expect(r.getSnapshot()).toBe('open 1');
  });

  it('closes one task after the last release, not before', () => {
    const r = new Counted();
    r.retain();
    r.retain();
    r.release();
    vi.runAllTimers();
    expect(r.closes).toBe(0); // one user left
    r.release();
    expect(r.closes).toBe(0); // not yet: a retain may still come
    vi.advanceTimersByTime(0);
    expect([r.opens, r.closes]).toEqual([1, 1]);
    r.release(); // an extra release is nothing
    vi.runAllTimers();
    expect(r.closes).toBe(1);
  });

  it('opens afresh when retained after it closed', () => {
    const r = new Counted();
    r.retain();
    r.release();
    vi.runAllTimers();
    r.retain();
    expect([r.opens, r.closes]).toEqual([2, 1]);
    expect(r.getSnapshot()).toBe('open 2');
  });

  it('tells subscribers of a new snapshot until they unsubscribe, and never of the same one', () => {
    const r = new Counted();
    const seen: string[] = [];
    const off = r.subscribe(() => seen.push(r.getSnapshot()));
    r.retain();
    r.release();
    vi.runAllTimers();
    off();
    r.retain();
    expect(seen).toEqual(['open 1', 'closed 1']);
  });
});
