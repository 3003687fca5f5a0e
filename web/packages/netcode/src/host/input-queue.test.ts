import { describe, expect, it } from 'vitest';
import { InputQueue } from './input-queue.js';

const seqs = (q: InputQueue<string>, ticks: number): string[] =>
  Array.from({ length: ticks }, () => {
    const n = q.next();
    return n.seq === null ? `${n.sticky ? 'sticky' : 'idle'}:${n.input}` : `${n.seq}:${n.input}`;
  });

describe('InputQueue', () => {
  it('applies each sequence once, in order, however packets repeat and reorder', () => {
    const q = new InputQueue('-', 120);
    q.receive(3, ['c', 'd']); // overtook the first packet
    q.receive(1, ['a', 'b', 'c']);
    q.receive(1, ['a', 'b', 'c', 'd', 'e']); // a repeat with one more
    expect(seqs(q, 5)).toEqual(['1:a', '2:b', '3:c', '4:d', '5:e']);
    q.receive(4, ['d', 'e', 'f']);
    expect(seqs(q, 1)).toEqual(['6:f']);
    expect(q.stats).toMatchObject({ applied: 6, duplicates: 7, sticky: 0 });
  });

  it('repeats the last input while the next is late, then still applies the late one', () => {
    const q = new InputQueue('-', 120);
    q.receive(1, ['a']);
    expect(seqs(q, 3)).toEqual(['1:a', 'sticky:a', 'sticky:a']);
    expect(q.stickySinceApplied).toBe(2);
    q.receive(2, ['b', 'c']);
    expect(seqs(q, 2)).toEqual(['2:b', '3:c']);
    expect(q.stats.sticky).toBe(2);
  });

  it('waits for a cushion before the first input, and is idle (not sticky) until then', () => {
    const q = new InputQueue('-', 120, 3);
    q.receive(1, ['a', 'b']);
    expect(seqs(q, 2)).toEqual(['idle:-', 'idle:-']);
    q.receive(3, ['c']);
    expect(seqs(q, 3)).toEqual(['1:a', '2:b', '3:c']);
  });

  it('refuses inputs too far ahead of the last applied one (no banking a speed-up)', () => {
    const q = new InputQueue('-', 4);
    q.receive(1, ['a', 'b', 'c', 'd', 'e', 'f']);
    expect(q.depth).toBe(4);
    expect(q.stats.overflow).toBe(2);
    expect(seqs(q, 5)).toEqual(['1:a', '2:b', '3:c', '4:d', 'sticky:d']);
    q.receive(5, ['e', 'f']); // the client sends them again: nothing is lost
    expect(seqs(q, 2)).toEqual(['5:e', '6:f']);
  });
});
