// Touch controls for phones: a stick on the left (its centre is where the
// thumb lands) and a Kick button on the right, under the pitch so no thumb
// hides play. Pointer Events tracked by pointerId so both thumbs work at
// once; touch-action: none (duel.css) so a drag never scrolls the page.
import type { DuelInput } from './sim';

/** A thumb this close to where it landed does not move the player (a resting thumb wobbles), px. */
const DEAD_ZONE = 12;
/** sin 22.5°: a component at least this share of the offset turns its axis on — 8 directions. */
const AXIS_ON = Math.sin(Math.PI / 8);

type Direction = Pick<DuelInput, 'up' | 'down' | 'left' | 'right'>;
const NONE: Direction = { up: false, down: false, left: false, right: false };

/** The direction a thumb (dx, dy) px from where it landed points in, screen axes. */
export function stickDirection(dx: number, dy: number): Direction {
  const d = Math.hypot(dx, dy);
  if (!(d > DEAD_ZONE)) return NONE;
  const on = AXIS_ON * d;
  return { up: dy <= -on, down: dy >= on, left: dx <= -on, right: dx >= on };
}

export class TouchControls {
  readonly el: HTMLDivElement;
  private readonly offs: (() => void)[] = [];
  private stick: { id: number; x0: number; y0: number; dir: Direction } | null = null;
  private kicks = new Set<number>();
  private touchMode = false;

  constructor(private readonly onTouchMode: (on: boolean) => void) {
    this.el = document.createElement('div');
    this.el.className = 'hr-duel-touch';
    this.el.hidden = true;
    const zone = document.createElement('div');
    zone.className = 'hr-duel-stick';
    zone.setAttribute('role', 'group');
    zone.setAttribute('aria-label', 'movement stick: drag to move');
    zone.textContent = 'drag to move';
    const kick = document.createElement('button');
    kick.type = 'button';
    kick.className = 'hr-duel-kick';
    kick.textContent = 'Kick';
    this.el.append(zone, kick);

    const on = <K extends keyof HTMLElementEventMap>(el: EventTarget, type: K, fn: (e: HTMLElementEventMap[K]) => void, capture = false): void => {
      el.addEventListener(type, fn as EventListener, capture);
      this.offs.push(() => el.removeEventListener(type, fn as EventListener, capture));
    };
    on(zone, 'pointerdown', (e) => {
      if (this.stick) return;
      e.preventDefault();
      zone.setPointerCapture(e.pointerId);
      this.stick = { id: e.pointerId, x0: e.clientX, y0: e.clientY, dir: NONE };
      zone.classList.add('hr-duel-held');
    });
    on(zone, 'pointermove', (e) => {
      if (this.stick?.id === e.pointerId) this.stick.dir = stickDirection(e.clientX - this.stick.x0, e.clientY - this.stick.y0);
    });
    const stickUp = (e: PointerEvent): void => {
      if (this.stick?.id !== e.pointerId) return;
      this.stick = null;
      zone.classList.remove('hr-duel-held');
    };
    on(zone, 'pointerup', stickUp);
    on(zone, 'pointercancel', stickUp);
    on(zone, 'lostpointercapture', stickUp);
    on(kick, 'pointerdown', (e) => {
      e.preventDefault();
      kick.setPointerCapture(e.pointerId);
      this.kicks.add(e.pointerId);
      kick.classList.add('hr-duel-held');
    });
    const kickUp = (e: PointerEvent): void => {
      this.kicks.delete(e.pointerId);
      kick.classList.toggle('hr-duel-held', this.kicks.size > 0);
    };
    on(kick, 'pointerup', kickUp);
    on(kick, 'pointercancel', kickUp);
    on(kick, 'lostpointercapture', kickUp);
    on(this.el, 'contextmenu', (e) => e.preventDefault());
    // The first touch anywhere shows the controls, for touch screens whose primary pointer is a mouse.
    on(window, 'pointerdown', (e) => {
      if (e.pointerType === 'touch') this.setTouchMode(true);
    }, true);
    const coarse = window.matchMedia('(pointer: coarse)');
    if (coarse.matches) this.setTouchMode(true);
  }

  get active(): boolean {
    return this.touchMode;
  }

  read(): DuelInput {
    const d = this.stick?.dir ?? NONE;
    return { ...d, kick: this.kicks.size > 0 };
  }

  dispose(): void {
    for (const off of this.offs) off();
  }

  private setTouchMode(on: boolean): void {
    if (on === this.touchMode) return;
    this.touchMode = on;
    this.el.hidden = !on;
    this.onTouchMode(on);
  }
}

/** Keyboard and touch together: a button is down when either holds it. */
export function mergeInputs(a: DuelInput, b: DuelInput): DuelInput {
  return { up: a.up || b.up, down: a.down || b.down, left: a.left || b.left, right: a.right || b.right, kick: a.kick || b.kick };
}
