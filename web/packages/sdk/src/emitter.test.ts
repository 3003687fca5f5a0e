import { describe, expect, it, vi } from 'vitest';
import { Emitter } from './emitter.js';

interface Events {
  ping: [n: number, label: string];
  done: [];
}

describe('Emitter', () => {
  it('delivers typed arguments and unsubscribes', () => {
    const e = new Emitter<Events>();
    const got: string[] = [];
    const off = e.on('ping', (n, label) => got.push(`${label}${n}`));
    e.emit('ping', 1, 'a');
    off();
    e.emit('ping', 2, 'b');
    expect(got).toEqual(['a1']);
  });

  it('once fires once', () => {
    const e = new Emitter<Events>();
    const cb = vi.fn();
    e.once('done', cb);
    e.emit('done');
    e.emit('done');
    expect(cb).toHaveBeenCalledTimes(1);
  });

  it('a throwing listener does not stop the others', async () => {
    const e = new Emitter<Events>();
    const after = vi.fn();
    const thrown: unknown[] = [];
    const onError = (err: unknown): void => void thrown.push(err);
    process.on('uncaughtException', onError);
    try {
      e.on('done', () => {
        throw new Error('boom');
      });
      e.on('done', after);
      e.emit('done');
      await new Promise((r) => setTimeout(r, 0));
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(after).toHaveBeenCalledOnce();
    expect(thrown).toHaveLength(1);
  });

  it('unsubscribing inside a listener is safe', () => {
    const e = new Emitter<Events>();
    const second = vi.fn();
    const off = e.on('done', () => off());
    e.on('done', second);
    e.emit('done');
    e.emit('done');
    expect(second).toHaveBeenCalledTimes(2);
  });
});
