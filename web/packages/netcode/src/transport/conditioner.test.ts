import { describe, expect, it } from 'vitest';
import { SimClock } from '../testing/sim-clock.js';
import { SimNetwork } from '../testing/sim-network.js';
import type { NetChannel } from './transport.js';

function setup(conditions: Parameters<SimNetwork['addClient']>[1], seed = 1) {
  const clock = new SimClock();
  const net = new SimNetwork(clock, 'host');
  const host = net.hostTransport();
  const client = net.addClient('c', conditions, seed);
  const got: { at: number; n: number; channel: NetChannel }[] = [];
  host.on('message', (_id, data, channel) => got.push({ at: clock.now(), n: data[0]!, channel }));
  clock.advance(1); // links open
  return { clock, host, client, got };
}

const send = (s: ReturnType<typeof setup>, count: number, everyMs: number, channel: NetChannel = 'game'): void => {
  for (let i = 0; i < count; i++) {
    s.client.send('host', new Uint8Array([i % 256]), channel);
    s.clock.advance(everyMs);
  }
  s.clock.advance(2000);
};

describe('ConditionedTransport', () => {
  it('adds latency and jitter, keeping order', () => {
    const s = setup({ latencyMs: 100, jitterMs: 20 });
    send(s, 200, 10);
    expect(s.got).toHaveLength(200);
    expect(s.got.map((g) => g.n)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    const delays = s.got.map((g, i) => g.at - (1 + i * 10));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(80);
    expect(Math.max(...delays)).toBeLessThanOrEqual(121);
  });

  it('loses, duplicates and reorders game packets at the seeded rates', () => {
    const s = setup({ latencyMs: 30, jitterMs: 5, loss: 0.2, duplicate: 0.1, reorder: 0.1 }, 5);
    send(s, 2000, 5);
    const st = s.client.stats;
    expect(st.dropped / 2000).toBeGreaterThan(0.17);
    expect(st.dropped / 2000).toBeLessThan(0.23);
    expect(st.duplicated).toBeGreaterThan(100);
    expect(s.got.length).toBe(2000 - st.dropped + st.duplicated);
    let inversions = 0;
    for (let i = 1; i < s.got.length; i++) if (((s.got[i]!.n - s.got[i - 1]!.n) & 0xff) > 128) inversions++;
    expect(inversions).toBeGreaterThan(50);
  });

  it('never loses or reorders the reliable channel, only delays it', () => {
    const s = setup({ latencyMs: 50, jitterMs: 30, loss: 0.5, duplicate: 0.5, reorder: 0.5 });
    send(s, 300, 3, 'events');
    expect(s.got.map((g) => g.n)).toEqual(Array.from({ length: 300 }, (_, i) => i % 256));
  });

  it('applies to what it receives too, and can be changed live', () => {
    const s = setup({ latencyMs: 40 });
    const got: number[] = [];
    s.client.on('message', () => got.push(s.clock.now()));
    s.host.send('c', new Uint8Array([1]), 'game');
    s.clock.advance(100);
    expect(got[0]).toBeCloseTo(1 + 40, 6);
    s.client.setConditions({ latencyMs: 0, loss: 1 });
    s.host.send('c', new Uint8Array([2]), 'game');
    s.clock.advance(100);
    expect(got).toHaveLength(1);
    expect(s.client.conditions).toMatchObject({ latencyMs: 0, loss: 1 });
  });

  it('passes straight through when idle', () => {
    const s = setup({});
    s.client.send('host', new Uint8Array([9]), 'game');
    s.clock.advance(0);
    expect(s.got).toEqual([{ at: 1, n: 9, channel: 'game' }]);
  });
});
