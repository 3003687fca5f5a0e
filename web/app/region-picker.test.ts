import { describe, expect, it } from 'vitest';
import { nodeBaseUrl, parseNodes, type ClusterNode, type NodesReply } from './nodes';
import { RegionPicker, type RegionProbes } from './region-picker';

const node = (id: string, region: string, extra: Partial<ClusterNode> = {}): ClusterNode => ({
  id,
  region,
  url: `http://${id}.test`,
  ws: `ws://${id}.test/ws`,
  stun: [`stun:${id}.test:3478`],
  rooms: 0,
  self: false,
  ...extra,
});

/** Probes answering from tables keyed by node id; counts what was asked. */
function probes(reply: NodesReply | null, stun: Record<string, number | null>, ws: Record<string, number | null> = {}) {
  const asked = { nodes: 0, stun: [] as string[], ws: [] as string[] };
  const idOf = (url: string): string => /(?:stun:|ws:\/\/)([a-z0-9]+)\./.exec(url)?.[1] ?? '';
  const p: RegionProbes = {
    nodes: async () => {
      asked.nodes++;
      return reply;
    },
    stun: async (url) => {
      asked.stun.push(idOf(url));
      return stun[idOf(url)] ?? null;
    },
    webSocket: async (url) => {
      asked.ws.push(idOf(url));
      return ws[idOf(url)] ?? null;
    },
  };
  return { p, asked };
}

const cluster = (...nodes: ClusterNode[]): NodesReply => ({ node: 'a', region: 'eu', nodes });

describe('RegionPicker', () => {
  it('picks the region whose node answers a STUN binding first, a region counting its best node', async () => {
    const { p } = probes(cluster(node('a', 'eu'), node('b', 'us'), node('c', 'us')), { a: 30, b: 80, c: 12.34 });
    expect(await new RegionPicker(p).nearest()).toEqual({ region: 'us', method: 'stun', rtts: { eu: 30, us: 12.3 } });
  });

  it('times WebSocket opens to every node when one gives no srflx candidate', async () => {
    const { p, asked } = probes(cluster(node('a', 'eu'), node('b', 'us')), { a: 5, b: null }, { a: 40, b: 20 });
    expect(await new RegionPicker(p).nearest()).toEqual({ region: 'us', method: 'websocket', rtts: { eu: 40, us: 20 } });
    expect(asked.ws).toEqual(['a', 'b']);
  });

  it('falls back to WebSocket for a node without a STUN URL', async () => {
    const { p, asked } = probes(cluster(node('a', 'eu'), node('b', 'us', { stun: [] })), { a: 5 }, { a: 9, b: 3 });
    expect((await new RegionPicker(p).nearest())?.region).toBe('us');
    expect(asked.stun).toEqual(['a']);
  });

  it('has nothing to choose on one node, one region, or no answer', async () => {
    for (const reply of [null, cluster(), cluster(node('a', 'eu'), node('b', 'eu')), cluster(node('a', ''), node('b', 'us'))]) {
      const { p, asked } = probes(reply, { a: 1, b: 2 });
      expect(await new RegionPicker(p).nearest()).toBeNull();
      expect(asked.stun).toEqual([]);
    }
    const { p } = probes(cluster(node('a', 'eu'), node('b', 'us')), {}, {});
    expect(await new RegionPicker(p).nearest()).toBeNull();
  });

  it('measures once for the page’s life', async () => {
    const { p, asked } = probes(cluster(node('a', 'eu'), node('b', 'us')), { a: 1, b: 2 });
    const picker = new RegionPicker(p);
    const [first, second] = await Promise.all([picker.nearest(), picker.nearest()]);
    expect(first).toBe(second);
    await picker.nearest();
    expect([asked.nodes, asked.stun.length]).toEqual([1, 2]);
  });

  it('answers null when measuring throws', async () => {
    const p: RegionProbes = {
      nodes: () => Promise.reject(new Error('network')),
      stun: async () => 1,
      webSocket: async () => 1,
    };
    expect(await new RegionPicker(p).nearest()).toBeNull();
  });
});

describe('parseNodes', () => {
  it('reads the server’s reply and drops what it cannot use', () => {
    expect(
      parseNodes({
        node: 'a',
        region: 'eu',
        nodes: [
          { id: 'a', region: 'eu', url: 'http://127.0.0.1:8080', ws: 'ws://127.0.0.1:8080/ws', stun: ['stun:127.0.0.1:3478', 7, 'http://x'], rooms: 3, self: true },
          { id: 'b', region: 'us', url: 'http://b', ws: 'javascript:alert(1)' },
          'junk',
        ],
      }),
    ).toEqual({
      node: 'a',
      region: 'eu',
      nodes: [{ id: 'a', region: 'eu', url: 'http://127.0.0.1:8080', ws: 'ws://127.0.0.1:8080/ws', stun: ['stun:127.0.0.1:3478'], rooms: 3, self: true }],
    });
    expect(parseNodes({ node: '', region: '', nodes: [] })).toEqual({ node: '', region: '', nodes: [] });
    expect(parseNodes(null)).toEqual({ node: '', region: '', nodes: [] });
  });
});

describe('nodeBaseUrl', () => {
  it('turns a lobby WebSocket URL back into the node’s base URL', () => {
    expect(nodeBaseUrl('ws://127.0.0.1:40111/ws')).toBe('http://127.0.0.1:40111');
    expect(nodeBaseUrl('wss://eu1.example.com/ws')).toBe('https://eu1.example.com');
    expect(nodeBaseUrl('wss://eu1.example.com/other')).toBeNull();
    expect(nodeBaseUrl('http://eu1.example.com/ws')).toBeNull();
  });
});
