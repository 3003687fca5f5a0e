import type { ClusterNode, NodesReply } from './nodes';

// Where to host a new room: in a cluster whose nodes name two or more
// regions, the region whose node answers fastest from this browser. Only
// creating a room asks (a join goes where its room is), and the answer is
// kept for the page's life.

export type ProbeMethod = 'stun' | 'websocket';

/** The region chosen and what it was chosen on: each region's best round trip in ms. */
export interface RegionPick {
  region: string;
  method: ProbeMethod;
  rtts: Record<string, number>;
}

/** What the picker measures with; the page passes the real ones, tests fakes. */
export interface RegionProbes {
  nodes(): Promise<NodesReply | null>;
  stun(url: string): Promise<number | null>;
  webSocket(url: string): Promise<number | null>;
}

export class RegionPicker {
  private pick: Promise<RegionPick | null> | null = null;

  constructor(private readonly probes: RegionProbes) {}

  /** The nearest region, measured on the first call; null when there is no choice to make or nothing answered. */
  nearest(): Promise<RegionPick | null> {
    this.pick ??= this.measure().catch(() => null);
    return this.pick;
  }

  private async measure(): Promise<RegionPick | null> {
    const reply = await this.probes.nodes();
    const nodes = (reply?.nodes ?? []).filter((n) => n.region !== '');
    if (new Set(nodes.map((n) => n.region)).size < 2) return null;
    // Every node the same way, or the regions are not compared fairly: STUN
    // to each, and if any gives no answer, WebSocket opens to each instead.
    const byStun = await Promise.all(nodes.map((n) => (n.stun[0] ? this.probes.stun(n.stun[0]) : Promise.resolve(null))));
    if (byStun.every((rtt) => rtt !== null)) return nearestOf(nodes, byStun, 'stun');
    const byWs = await Promise.all(nodes.map((n) => this.probes.webSocket(n.ws)));
    return nearestOf(nodes, byWs, 'websocket');
  }
}

/** The region of the fastest node; a region's figure is its fastest node's. */
function nearestOf(nodes: ClusterNode[], rtts: (number | null)[], method: ProbeMethod): RegionPick | null {
  const best: Record<string, number> = {};
  nodes.forEach((n, i) => {
    const rtt = rtts[i];
    if (rtt === null || rtt === undefined) return;
    const ms = Math.round(rtt * 10) / 10;
    if (!(n.region in best) || ms < (best[n.region] as number)) best[n.region] = ms;
  });
  const regions = Object.keys(best).sort((a, b) => (best[a] as number) - (best[b] as number));
  const region = regions[0];
  return region === undefined ? null : { region, method, rtts: best };
}
