// The conditioner's controls: presets and the five knobs, applied live.
import type { Conditions } from '@hostrelay/netcode';

export const PRESETS: Readonly<Record<string, Conditions>> = {
  off: { latencyMs: 0, jitterMs: 0, loss: 0, duplicate: 0, reorder: 0 },
  'bad wifi': { latencyMs: 50, jitterMs: 20, loss: 0.1, duplicate: 0, reorder: 0 },
  mobile: { latencyMs: 80, jitterMs: 30, loss: 0.05, duplicate: 0.01, reorder: 0.02 },
  awful: { latencyMs: 150, jitterMs: 50, loss: 0.2, duplicate: 0.05, reorder: 0.05 },
};

interface Knob {
  key: keyof Conditions;
  label: string;
  unit: string;
  max: number;
  /** Shown value per unit of the condition (100 for shares shown as %). */
  scale: number;
}

const KNOBS: Knob[] = [
  { key: 'latencyMs', label: 'Latency (each way)', unit: 'ms', max: 1000, scale: 1 },
  { key: 'jitterMs', label: 'Jitter (±)', unit: 'ms', max: 500, scale: 1 },
  { key: 'loss', label: 'Loss', unit: '%', max: 100, scale: 100 },
  { key: 'duplicate', label: 'Duplication', unit: '%', max: 100, scale: 100 },
  { key: 'reorder', label: 'Reordering', unit: '%', max: 100, scale: 100 },
];

export class DebugPanel {
  readonly el: HTMLDetailsElement;
  private readonly inputs = new Map<keyof Conditions, HTMLInputElement>();
  private readonly preset: HTMLSelectElement;

  constructor(initial: Conditions, apply: (c: Partial<Conditions>) => void) {
    this.el = document.createElement('details');
    this.el.className = 'hr-netpanel';
    const summary = document.createElement('summary');
    summary.textContent = 'Network conditioner';
    const form = document.createElement('form');
    form.addEventListener('submit', (e) => e.preventDefault());

    this.preset = document.createElement('select');
    this.preset.id = 'hr-net-preset';
    for (const name of ['custom', ...Object.keys(PRESETS)]) this.preset.add(new Option(name, name));
    this.preset.addEventListener('change', () => {
      const p = PRESETS[this.preset.value];
      if (!p) return;
      this.show(p);
      apply(p);
    });
    form.append(this.field('hr-net-preset', 'Preset', this.preset));

    for (const k of KNOBS) {
      const input = document.createElement('input');
      input.type = 'number';
      input.id = `hr-net-${k.key}`;
      input.min = '0';
      input.max = String(k.max);
      input.step = '1';
      input.addEventListener('change', () => {
        const v = Math.min(k.max, Math.max(0, Number(input.value) || 0));
        this.preset.value = 'custom';
        apply({ [k.key]: v / k.scale });
      });
      this.inputs.set(k.key, input);
      form.append(this.field(input.id, `${k.label} (${k.unit})`, input));
    }
    const note = document.createElement('p');
    note.textContent = 'Applies to what this tab sends and receives on the game channel (the events channel only gets the delay).';
    this.el.append(summary, form, note);
    this.show(initial);
  }

  private field(id: string, text: string, control: HTMLElement): HTMLElement {
    const label = document.createElement('label');
    label.htmlFor = id;
    label.textContent = text;
    const row = document.createElement('div');
    row.className = 'hr-netpanel-row';
    row.append(label, control);
    return row;
  }

  private show(c: Conditions): void {
    for (const k of KNOBS) {
      const input = this.inputs.get(k.key);
      if (input) input.value = String(Math.round(c[k.key] * k.scale));
    }
  }
}
