// GET /api/v1/nodes: the cluster's live nodes as this node sees them, for
// the region choice when creating a room. On a single node the list is
// empty. The reply is checked field by field: it decides where a WebSocket
// and a STUN probe go.

/** One live node of the cluster. */
export interface ClusterNode {
  id: string;
  region: string;
  /** Its public base URL (share links to its rooms start with it). */
  url: string;
  /** Its lobby WebSocket URL. */
  ws: string;
  /** stun: URLs of its TURN server, for timing the round trip to it. */
  stun: string[];
  rooms: number;
  /** The node that answered. */
  self: boolean;
}

export interface NodesReply {
  node: string;
  region: string;
  nodes: ClusterNode[];
}

const NODES_TIMEOUT_MS = 2000;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function nodeOf(raw: unknown): ClusterNode | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const ws = str(r['ws']);
  if (!/^wss?:\/\//.test(ws)) return null;
  const stun = Array.isArray(r['stun']) ? r['stun'].filter((s): s is string => typeof s === 'string' && /^stuns?:/.test(s)) : [];
  return {
    id: str(r['id']),
    region: str(r['region']),
    url: str(r['url']),
    ws,
    stun,
    rooms: typeof r['rooms'] === 'number' ? r['rooms'] : 0,
    self: r['self'] === true,
  };
}

/** Parses a /api/v1/nodes body; nodes without a lobby WebSocket URL are left out. */
export function parseNodes(raw: unknown): NodesReply {
  const r = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const nodes = Array.isArray(r['nodes']) ? r['nodes'].map(nodeOf).filter((n): n is ClusterNode => n !== null) : [];
  return { node: str(r['node']), region: str(r['region']), nodes };
}

/** This node's view of the cluster, or null if it cannot say (an older server, a network error). */
export async function fetchNodes(): Promise<NodesReply | null> {
  try {
    const res = await fetch('/api/v1/nodes', { signal: AbortSignal.timeout(NODES_TIMEOUT_MS), cache: 'no-store' });
    return res.ok ? parseNodes(await res.json()) : null;
  } catch {
    return null;
  }
}

/**
 * The HTTP base URL of the node behind a lobby WebSocket URL
 * (ws://host:port/ws → http://host:port), as the server derives one from
 * the other; null for anything else.
 */
export function nodeBaseUrl(ws: string): string | null {
  const m = /^(ws|wss):\/\/([^/?#]+)\/ws$/.exec(ws);
  return m ? `${m[1] === 'wss' ? 'https' : 'http'}://${m[2]}` : null;
}
