// What a tab shows and how it steers, as a Phaser scene: the field, a circle
// per player, the virtual joystick. The same on host and clients; it draws
// whatever entities it is given (tag.ts hands it NetHost's or NetClient's
// frame) and knows nothing of the network.
import type { ReadonlyEntityMap } from '@hostrelay/netcode';
import * as Phaser from 'phaser';
import { H, R, W, type Field, type TagInput } from './rules';
import { knobOffset, keysInput, STICK_RADIUS, stickInput } from './stick';

const COLOURS = [0x38bdf8, 0xa3e635, 0xfbbf24, 0xc084fc, 0x2dd4bf, 0xf472b6, 0xfb923c, 0x94a3b8];
const IT_COLOUR = 0xef4444;

interface Sprite {
  readonly disc: Phaser.GameObjects.Arc;
  readonly label: Phaser.GameObjects.Text;
}

export class TagScene extends Phaser.Scene {
  /** Called every frame with nothing; returns what to draw. Set by tag.ts once the scene is created. */
  draw: (() => { entities: ReadonlyEntityMap<Field>; mySlot: number | null; nameOf: (slot: number) => string }) | null = null;
  private readonly sprites = new Map<number, Sprite>();
  private keys: Record<'left' | 'right' | 'up' | 'down' | 'a' | 'd' | 'w' | 's', Phaser.Input.Keyboard.Key> | null = null;
  private stick: { id: number; base: Phaser.Math.Vector2; thumb: Phaser.Math.Vector2 } | null = null;
  private stickGraphics!: Phaser.GameObjects.Graphics;
  private readonly onReady: (scene: TagScene) => void;

  constructor(onReady: (scene: TagScene) => void) {
    super('tag');
    this.onReady = onReady;
  }

  create(): void {
    const field = this.add.graphics();
    field.fillStyle(0x13203a).fillRect(0, 0, W, H);
    field.lineStyle(2, 0xffffff, 0.06);
    for (let v = 100; v < W; v += 100) field.lineBetween(v, 0, v, H).lineBetween(0, v, W, v);
    field.lineStyle(4, 0xffffff, 0.35).strokeRect(0, 0, W, H);
    this.stickGraphics = this.add.graphics().setDepth(10);

    const kb = this.input.keyboard;
    if (kb) {
      const k = Phaser.Input.Keyboard.KeyCodes;
      this.keys = kb.addKeys({ left: k.LEFT, right: k.RIGHT, up: k.UP, down: k.DOWN, a: k.A, d: k.D, w: k.W, s: k.S }) as NonNullable<TagScene['keys']>;
    }
    // The stick appears where a finger (or the mouse) lands, anywhere on the canvas; dragging steers.
    this.input.on('pointerdown', (p: Phaser.Input.Pointer) => {
      if (!this.stick) this.stick = { id: p.id, base: new Phaser.Math.Vector2(p.x, p.y), thumb: new Phaser.Math.Vector2(p.x, p.y) };
    });
    this.input.on('pointermove', (p: Phaser.Input.Pointer) => {
      if (this.stick?.id === p.id) this.stick.thumb.set(p.x, p.y);
    });
    const lift = (p: Phaser.Input.Pointer): void => {
      if (this.stick?.id === p.id) this.stick = null;
    };
    this.input.on('pointerup', lift);
    this.input.on('pointerupoutside', lift);

    this.scale.on('resize', () => this.fit());
    this.fit();
    this.onReady(this);
  }

  /** The player's input now: the stick while a finger is on it, else the keys. NetHost and NetClient call it every tick. */
  readInput = (): TagInput => {
    // Pointers are in canvas pixels; the stick is sized in CSS pixels (the scale's zoom is CSS pixels per canvas pixel).
    const css = this.scale.zoom;
    if (this.stick) return stickInput((this.stick.thumb.x - this.stick.base.x) * css, (this.stick.thumb.y - this.stick.base.y) * css);
    const k = this.keys;
    if (!k) return { x: 0, y: 0 };
    return keysInput(k.left.isDown || k.a.isDown, k.right.isDown || k.d.isDown, k.up.isDown || k.w.isDown, k.down.isDown || k.s.isDown);
  };

  override update(): void {
    const what = this.draw?.();
    if (!what) return;
    const { entities, mySlot, nameOf } = what;
    for (const [slot, e] of entities) {
      let s = this.sprites.get(slot);
      if (!s) {
        const disc = this.add.circle(0, 0, R, COLOURS[slot % COLOURS.length]);
        const label = this.add.text(0, 0, '', { fontFamily: 'system-ui, sans-serif', fontSize: '18px', color: '#e8ecf4' }).setOrigin(0.5, 1);
        s = { disc, label };
        this.sprites.set(slot, s);
      }
      s.disc.setPosition(e.x, e.y);
      s.disc.setFillStyle(e.it ? IT_COLOUR : COLOURS[slot % COLOURS.length]);
      s.disc.setStrokeStyle(slot === mySlot ? 4 : 0, 0xffffff);
      s.disc.setAlpha(e.cool > 0 ? 0.45 : 1);
      s.label.setPosition(e.x, e.y - R - 4);
      s.label.setText(e.it ? `${nameOf(slot)} · IT` : nameOf(slot));
    }
    for (const [slot, s] of this.sprites) {
      if (entities.has(slot)) continue;
      s.disc.destroy();
      s.label.destroy();
      this.sprites.delete(slot);
    }
    this.drawStick();
  }

  /**
   * Zooms the camera so the whole field shows. On a tall screen (a phone held
   * upright) the field sits at the top, leaving room under it for the thumb.
   */
  private fit(): void {
    const { width, height } = this.scale.gameSize;
    const cam = this.cameras.main;
    const zoom = Math.min(width / W, height / H) * 0.98;
    cam.setZoom(zoom);
    const tall = height > width * 1.25;
    cam.centerOn(W / 2, tall ? H / 2 + (height / zoom - H) / 2 - 4 : H / 2);
  }

  /** The stick in screen pixels, drawn in the world under the zoomed camera. */
  private drawStick(): void {
    const g = this.stickGraphics.clear();
    if (!this.stick) return;
    const cam = this.cameras.main;
    const css = this.scale.zoom;
    const { base, thumb } = this.stick;
    const knob = knobOffset((thumb.x - base.x) * css, (thumb.y - base.y) * css);
    const at = cam.getWorldPoint(base.x, base.y);
    const k = cam.getWorldPoint(base.x + knob.x / css, base.y + knob.y / css);
    const px = 1 / css / cam.zoom; // world units per CSS pixel
    g.fillStyle(0xffffff, 0.12).fillCircle(at.x, at.y, STICK_RADIUS * px);
    g.lineStyle(2 * px, 0xffffff, 0.4).strokeCircle(at.x, at.y, STICK_RADIUS * px);
    g.fillStyle(0xffffff, 0.55).fillCircle(k.x, k.y, STICK_RADIUS * 0.45 * px);
  }
}
