// The netgraph: what the network is doing to this tab, refreshed a few
// times a second, with a strip chart of the round trip (and corrections as
// ticks on it: amber for the player's, cyan for the ball's) in the style
// of Source's net_graph.
import type { ClientStats, HostPeerStats } from '@hostrelay/netcode';

const HISTORY = 120;

const ms = (v: number | null): string => (v === null ? '–' : `${v.toFixed(0)} ms`);
const pct = (v: number): string => `${(v * 100).toFixed(1)} %`;
const kbs = (v: number): string => `${(v / 1024).toFixed(2)} KB/s`;

export class Netgraph {
  readonly el: HTMLElement;
  private readonly text: HTMLElement;
  private readonly chart: HTMLCanvasElement;
  private readonly rtts: number[] = [];
  private readonly marks: boolean[] = [];
  private readonly ballMarks: boolean[] = [];
  private lastCorrections = 0;
  private lastBallCorrections = 0;

  constructor() {
    this.el = document.createElement('div');
    this.el.className = 'hr-netgraph';
    this.el.setAttribute('aria-label', 'network statistics');
    this.text = document.createElement('pre');
    this.chart = document.createElement('canvas');
    this.chart.width = 240;
    this.chart.height = 40;
    this.el.append(this.text, this.chart);
  }

  showClient(s: ClientStats): void {
    const dry = s.frames > 0 ? s.dryFrames / s.frames : 0;
    this.text.textContent = [
      `RTT ${ms(s.rttMs)}   jitter ${ms(s.jitterMs)}`,
      `loss in ${pct(s.lossIn)}   out ${pct(s.lossOut)}`,
      `in ${kbs(s.bytesInPerSec)}   out ${kbs(s.bytesOutPerSec)}`,
      `${s.snapshotRate.toFixed(0)} snapshots/s   interp ${ms(s.interpDelayMs)}`,
      `dry ${pct(dry)}   late inputs ${s.stickyTicks}`,
      `corrections ${s.corrections} (last ${s.lastCorrection.toFixed(1)} px)   jumps ${s.snaps}`,
      `ball ${s.predictedEntities > 0 ? 'predicted' : 'interpolated'}   corrections ${s.entityCorrections} (last ${s.lastEntityCorrection.toFixed(1)} px)`,
    ].join('\n');
    this.push(s.rttMs ?? 0, s.corrections > this.lastCorrections, s.entityCorrections > this.lastBallCorrections);
    this.lastCorrections = s.corrections;
    this.lastBallCorrections = s.entityCorrections;
  }

  showHost(tick: number, peers: { name: string; stats: HostPeerStats }[]): void {
    const lines = [`host · tick ${tick} · ${peers.length} client${peers.length === 1 ? '' : 's'}`];
    for (const { name, stats: s } of peers) {
      lines.push(`${name}: RTT ${ms(s.rttMs)}   loss in ${pct(s.lossIn)}`, `  ↓ ${kbs(s.bytesOutPerSec)}   ↑ ${kbs(s.bytesInPerSec)}   late inputs ${s.stickyTicks}`);
    }
    this.text.textContent = lines.join('\n');
    const worst = Math.max(0, ...peers.map((p) => p.stats.rttMs ?? 0));
    this.push(worst, false, false);
  }

  private push(rtt: number, corrected: boolean, ballCorrected: boolean): void {
    this.rtts.push(rtt);
    this.marks.push(corrected);
    this.ballMarks.push(ballCorrected);
    if (this.rtts.length > HISTORY) {
      this.rtts.shift();
      this.marks.shift();
      this.ballMarks.shift();
    }
    const c = this.chart.getContext('2d');
    if (!c) return;
    const { width: w, height: h } = this.chart;
    c.clearRect(0, 0, w, h);
    const top = Math.max(100, ...this.rtts);
    c.strokeStyle = '#6fdc8c';
    c.lineWidth = 1.5;
    c.beginPath();
    this.rtts.forEach((v, i) => {
      const x = (i / (HISTORY - 1)) * w;
      const y = h - (v / top) * (h - 2) - 1;
      if (i === 0) c.moveTo(x, y);
      else c.lineTo(x, y);
    });
    c.stroke();
    c.fillStyle = '#ffb224';
    this.marks.forEach((m, i) => {
      if (m) c.fillRect((i / (HISTORY - 1)) * w - 1, 0, 2, h / 2);
    });
    c.fillStyle = '#3ed6f0';
    this.ballMarks.forEach((m, i) => {
      if (m) c.fillRect((i / (HISTORY - 1)) * w - 1, h / 2, 2, h / 2);
    });
  }
}
