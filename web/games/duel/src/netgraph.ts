// The netgraph: what the lockstep session is doing, a few times a second —
// the mode, how often and how deep it rolls back, what it re-simulates,
// predictions that missed, late inputs the host filled in, the round trip
// and desyncs — with a strip chart of frames re-simulated (rollback) or
// stalled ticks (lockstep) per refresh.
import type { Desync, LockstepStats } from '@hostrelay/netcode';

const HISTORY = 120;

export class DuelNetgraph {
  readonly el: HTMLElement;
  private readonly text: HTMLElement;
  private readonly chart: HTMLCanvasElement;
  private readonly bars: number[] = [];
  private lastCount = 0;

  constructor() {
    this.el = document.createElement('div');
    this.el.className = 'hr-duel-netgraph';
    this.el.setAttribute('aria-label', 'network statistics');
    this.text = document.createElement('pre');
    this.chart = document.createElement('canvas');
    this.chart.width = 240;
    this.chart.height = 36;
    this.el.append(this.text, this.chart);
  }

  show(s: LockstepStats, host: boolean, desyncs: readonly Desync[], modeSwitches = 0): void {
    const late = s.lateInputs.reduce((a, b) => a + b, 0);
    this.text.textContent = [
      `${s.mode}${host ? ' · host' : ''} · frame ${s.frame} (confirmed ${s.confirmedFrame})`,
      `rollbacks ${s.rollbacks} (${s.rollbacksPerSecond.toFixed(2)}/s)   max depth ${s.maxRollbackDepth}`,
      `re-simulated ${s.framesResimulated}   prediction misses ${s.predictionMisses}`,
      // Late inputs are the host's count (it fills them in); buffered frames only mean something to a lockstep client.
      `late inputs ${host ? late : '–'}   stalled ${s.stalledTicks}${!host && s.mode === 'lockstep' ? `   buffered ${s.bufferedFrames}` : ''}`,
      // The input delay grows on a rollback client whose round trip outgrew the window: the reason its own moves feel slower.
      `RTT ${host ? '–' : `${s.rttMs.toFixed(0)} ms`}   input delay ${s.inputDelay}   desyncs ${desyncs.length === 0 ? 0 : desyncs.map((d) => `slot ${d.slot} @${d.frame}`).join(', ')}`,
      // A desync heals with the host's state (a resync), as a join, a resume and a mode switch do: counted here.
      `healed ${s.healed}${s.healed > 0 ? ` (last ${s.lastHealMs.toFixed(0)} ms)` : ''}   resyncs ${s.resyncs}   mode switches ${modeSwitches}`,
    ].join('\n');
    // Red while a desync is not healed yet.
    this.el.classList.toggle('hr-duel-desync', s.desyncs > s.healed);
    // The chart: frames re-simulated per refresh in rollback; in lockstep, where nothing rolls back, ticks stalled waiting for a frame.
    const count = s.mode === 'rollback' ? s.framesResimulated : s.stalledTicks;
    this.bars.push(count - this.lastCount);
    this.lastCount = count;
    if (this.bars.length > HISTORY) this.bars.shift();
    const c = this.chart.getContext('2d');
    if (!c) return;
    const { width: w, height: h } = this.chart;
    c.clearRect(0, 0, w, h);
    const top = Math.max(20, ...this.bars);
    c.fillStyle = '#ffb224';
    const bw = w / HISTORY;
    this.bars.forEach((b, i) => {
      const bh = (b / top) * (h - 1);
      c.fillRect(i * bw, h - bh, Math.max(1, bw - 0.5), bh);
    });
  }
}
