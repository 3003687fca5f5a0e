// The on-screen controls for phones: a stick on the left (it starts where
// the thumb lands) and a Kick button on the right, under the field so no
// thumb hides play. Pointer Events, tracked by pointerId, so both thumbs
// work at once; touch-action: none (game.css) so dragging never scrolls or
// zooms the page. The input logic is touch-input.ts; this file is its DOM.
import type { ArenaInput } from './schema';
import { STICK, TouchInput, type Point } from './touch-input';

/** A phone or tablet: the primary pointer is a finger. */
const COARSE = '(pointer: coarse)';

export class TouchControls {
  /** The pad: append it where it goes. Hidden until the page looks like a touch device. */
  readonly el: HTMLDivElement;
  private readonly input = new TouchInput();
  private readonly zone: HTMLDivElement;
  private readonly base: HTMLDivElement;
  private readonly knob: HTMLDivElement;
  private readonly kick: HTMLButtonElement;
  private readonly offs: (() => void)[] = [];
  private touchMode = false;

  /** `onTouchMode` runs once the controls show: the game changes its help text and layout. */
  constructor(private readonly onTouchMode: (on: boolean) => void) {
    this.el = document.createElement('div');
    this.el.className = 'hr-touch';
    this.el.hidden = true;
    this.zone = document.createElement('div');
    this.zone.className = 'hr-touch-stick';
    this.zone.setAttribute('role', 'group');
    this.zone.setAttribute('aria-label', 'movement stick: drag to move');
    this.base = document.createElement('div');
    this.base.className = 'hr-touch-base';
    this.knob = document.createElement('div');
    this.knob.className = 'hr-touch-knob';
    this.base.append(this.knob);
    const label = document.createElement('span');
    label.className = 'hr-touch-label';
    label.textContent = 'drag to move';
    this.zone.append(this.base, label);
    this.kick = document.createElement('button');
    this.kick.type = 'button';
    this.kick.className = 'hr-touch-kick';
    this.kick.textContent = 'Kick';
    this.el.append(this.zone, this.kick);
    this.el.style.setProperty('--hr-stick-r', `${STICK.radius}px`);

    const zoneDown = (e: PointerEvent): void => {
      if (!this.input.stickDown(e.pointerId, this.at(e))) return;
      e.preventDefault();
      // Captured, the thumb keeps steering when it slides off the stick's area.
      this.zone.setPointerCapture(e.pointerId);
      this.show();
    };
    const zoneMove = (e: PointerEvent): void => {
      this.input.stickMove(e.pointerId, this.at(e));
      this.show();
    };
    const zoneUp = (e: PointerEvent): void => {
      this.input.stickUp(e.pointerId);
      this.show();
    };
    const kickDown = (e: PointerEvent): void => {
      e.preventDefault(); // no focus ring, no emulated mouse click after the tap
      this.kick.setPointerCapture(e.pointerId);
      this.input.kickDown(e.pointerId);
      this.show();
    };
    const kickUp = (e: PointerEvent): void => {
      this.input.kickUp(e.pointerId);
      this.show();
    };
    // Enter on the focused button (a click with no pointer behind it) kicks once.
    const kickKey = (e: MouseEvent): void => {
      if (e.detail !== 0) return;
      this.input.kickDown(-1);
      this.input.kickUp(-1);
    };
    // A long press would open the context menu or the text callout.
    const noMenu = (e: Event): void => e.preventDefault();
    // A finger still down when the page is hidden never sends its pointerup.
    const release = (): void => {
      this.input.releaseAll();
      this.show();
    };
    const visibility = (): void => {
      if (document.hidden) release();
    };
    // The first touch anywhere switches to touch mode, for touch screens whose primary pointer is a mouse.
    const firstTouch = (e: PointerEvent): void => {
      if (e.pointerType === 'touch') this.setTouchMode(true);
    };
    const coarse = window.matchMedia(COARSE);
    const coarseChange = (): void => {
      if (coarse.matches) this.setTouchMode(true);
    };

    const listen = <K extends keyof HTMLElementEventMap>(
      el: HTMLElement,
      type: K,
      fn: (e: HTMLElementEventMap[K]) => void,
    ): void => {
      el.addEventListener(type, fn);
      this.offs.push(() => el.removeEventListener(type, fn));
    };
    listen(this.zone, 'pointerdown', zoneDown);
    listen(this.zone, 'pointermove', zoneMove);
    listen(this.zone, 'pointerup', zoneUp);
    listen(this.zone, 'pointercancel', zoneUp);
    listen(this.zone, 'lostpointercapture', zoneUp);
    listen(this.kick, 'pointerdown', kickDown);
    listen(this.kick, 'pointerup', kickUp);
    listen(this.kick, 'pointercancel', kickUp);
    listen(this.kick, 'lostpointercapture', kickUp);
    listen(this.kick, 'click', kickKey);
    listen(this.el, 'contextmenu', noMenu);
    window.addEventListener('pointerdown', firstTouch, true);
    window.addEventListener('blur', release);
    document.addEventListener('visibilitychange', visibility);
    coarse.addEventListener('change', coarseChange);
    this.offs.push(() => {
      window.removeEventListener('pointerdown', firstTouch, true);
      window.removeEventListener('blur', release);
      document.removeEventListener('visibilitychange', visibility);
      coarse.removeEventListener('change', coarseChange);
    });
    if (coarse.matches) this.setTouchMode(true);
  }

  /** The controls are showing (a touch device). */
  get active(): boolean {
    return this.touchMode;
  }

  /** The input for this tick (all released while the controls are hidden). */
  read(): ArenaInput {
    return this.input.read();
  }

  dispose(): void {
    for (const off of this.offs) off();
    this.input.releaseAll();
  }

  private setTouchMode(on: boolean): void {
    if (on === this.touchMode) return;
    this.touchMode = on;
    this.el.hidden = !on;
    if (!on) this.input.releaseAll();
    this.show();
    this.onTouchMode(on);
  }

  /** The pointer in the stick area's coordinates, CSS pixels. */
  private at(e: PointerEvent): Point {
    const r = this.zone.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  /** Puts the base where the thumb landed and the knob under the thumb, or both back at rest. */
  private show(): void {
    const v = this.input.view;
    this.zone.classList.toggle('hr-touch-held', v !== null);
    this.kick.classList.toggle('hr-touch-held', this.input.kicking);
    if (v) {
      this.base.style.left = `${v.base.x}px`;
      this.base.style.top = `${v.base.y}px`;
      this.knob.style.transform = `translate(${v.knob.x}px, ${v.knob.y}px)`;
    } else {
      this.base.style.left = '';
      this.base.style.top = '';
      this.knob.style.transform = '';
    }
  }
}
