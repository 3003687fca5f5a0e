// Arrow keys or WASD to move, space to kick. Keys typed into a form field
// (the lobby's chat) are not the game's.
import type { ArenaInput } from './schema';

const KEYS: Record<string, keyof ArenaInput> = {
  ArrowUp: 'up',
  KeyW: 'up',
  ArrowDown: 'down',
  KeyS: 'down',
  ArrowLeft: 'left',
  KeyA: 'left',
  ArrowRight: 'right',
  KeyD: 'right',
  Space: 'kick',
};

const typing = (t: EventTarget | null): boolean =>
  t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));

export class Keyboard {
  private readonly held = new Set<keyof ArenaInput>();
  private readonly off: () => void;

  constructor(target: Window = window) {
    const down = (e: KeyboardEvent): void => {
      const k = KEYS[e.code];
      if (!k || typing(e.target)) return;
      this.held.add(k);
      e.preventDefault(); // no page scrolling on arrows and space
    };
    const up = (e: KeyboardEvent): void => {
      const k = KEYS[e.code];
      if (k) this.held.delete(k);
    };
    // Keys held while the window loses focus never see their keyup.
    const blur = (): void => this.held.clear();
    target.addEventListener('keydown', down);
    target.addEventListener('keyup', up);
    target.addEventListener('blur', blur);
    this.off = () => {
      target.removeEventListener('keydown', down);
      target.removeEventListener('keyup', up);
      target.removeEventListener('blur', blur);
    };
  }

  get active(): boolean {
    return this.held.size > 0;
  }

  read(): ArenaInput {
    const h = this.held;
    return { up: h.has('up'), down: h.has('down'), left: h.has('left'), right: h.has('right'), kick: h.has('kick') };
  }

  dispose(): void {
    this.off();
  }
}
