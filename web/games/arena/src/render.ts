// Draws one frame of the arena on a canvas scaled to fit its box.
import type { Entity, ReadonlyEntityMap } from '@hostrelay/netcode';
import { ARENA_H, ARENA_W, BALL_R, GOAL_H, Kind, PLAYER_R, SCORE_ID, type Field } from './schema';

export const TEAM_COLORS = ['#e5484d', '#3e7bfa'] as const;
const TEAM_NAMES = ['Red', 'Blue'] as const;

export interface Frame {
  entities: ReadonlyEntityMap<Field>;
  /** The entity this tab controls (drawn with a ring), if any. */
  localId: number | null;
  /** Player names by entity id (slot). */
  names: ReadonlyMap<number, string>;
}

/** Smallest on-screen sizes, CSS px: on a phone the field is a third of its size and 14-unit names were 5 px. */
const MIN_NAME_PX = 11;
const MIN_SCORE_PX = 15;
const MIN_RING_PX = 2;

export class Renderer {
  private readonly ctx: CanvasRenderingContext2D;
  /** Arena units per CSS pixel in the frame being drawn (1 or less on a desktop, about 3 on a phone). */
  private unitsPerPx = 1;

  constructor(private readonly canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('game: no 2D canvas context');
    this.ctx = ctx;
  }

  draw(f: Frame): void {
    const { canvas, ctx } = this;
    const dpr = globalThis.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    const scale = Math.min(w / ARENA_W, h / ARENA_H);
    this.unitsPerPx = dpr / scale;
    ctx.setTransform(scale, 0, 0, scale, (w - ARENA_W * scale) / 2, (h - ARENA_H * scale) / 2);
    ctx.clearRect(-ARENA_W, -ARENA_H, 3 * ARENA_W, 3 * ARENA_H);
    this.pitch();
    const score = f.entities.get(SCORE_ID);
    if (score) this.scoreboard(score);
    for (const [id, e] of f.entities) {
      if (e.kind === Kind.Player) this.player(e, id === f.localId, f.names.get(id) ?? `#${id}`);
    }
    for (const e of f.entities.values()) if (e.kind === Kind.Ball) this.ball(e);
  }

  private pitch(): void {
    const c = this.ctx;
    c.fillStyle = '#2f7d4a';
    c.fillRect(0, 0, ARENA_W, ARENA_H);
    c.strokeStyle = 'rgba(255,255,255,0.55)';
    c.lineWidth = 3;
    c.strokeRect(1.5, 1.5, ARENA_W - 3, ARENA_H - 3);
    c.beginPath();
    c.moveTo(ARENA_W / 2, 0);
    c.lineTo(ARENA_W / 2, ARENA_H);
    c.stroke();
    c.beginPath();
    c.arc(ARENA_W / 2, ARENA_H / 2, 70, 0, Math.PI * 2);
    c.stroke();
    const top = (ARENA_H - GOAL_H) / 2;
    TEAM_COLORS.forEach((color, team) => {
      c.fillStyle = color;
      c.fillRect(team === 0 ? 0 : ARENA_W - 8, top, 8, GOAL_H);
    });
  }

  private scoreboard(s: Readonly<Entity<Field>>): void {
    const c = this.ctx;
    // Grown as a whole on a small screen, so the digits stay readable and inside their box.
    const k = Math.max(1, (MIN_SCORE_PX * this.unitsPerPx) / 28);
    c.font = `bold ${28 * k}px system-ui, sans-serif`;
    c.textAlign = 'center';
    c.textBaseline = 'top';
    c.fillStyle = 'rgba(0,0,0,0.35)';
    c.fillRect(ARENA_W / 2 - 80 * k, 8, 160 * k, 40 * k);
    c.fillStyle = TEAM_COLORS[0];
    c.fillText(String(s.scoreL), ARENA_W / 2 - 40 * k, 8 + 6 * k);
    c.fillStyle = '#fff';
    c.fillText(':', ARENA_W / 2, 8 + 4 * k);
    c.fillStyle = TEAM_COLORS[1];
    c.fillText(String(s.scoreR), ARENA_W / 2 + 40 * k, 8 + 6 * k);
  }

  private player(e: Readonly<Entity<Field>>, local: boolean, name: string): void {
    const c = this.ctx;
    c.beginPath();
    c.arc(e.x, e.y, PLAYER_R, 0, Math.PI * 2);
    c.fillStyle = TEAM_COLORS[e.team === 1 ? 1 : 0];
    c.fill();
    c.lineWidth = local ? Math.max(4, MIN_RING_PX * this.unitsPerPx) : 2;
    c.strokeStyle = local ? '#ffe14d' : 'rgba(0,0,0,0.4)';
    c.stroke();
    c.font = `${Math.max(14, MIN_NAME_PX * this.unitsPerPx)}px system-ui, sans-serif`;
    c.textAlign = 'center';
    c.textBaseline = 'bottom';
    c.fillStyle = '#fff';
    const label = local ? `${name} (you)` : name;
    // Kept inside the field: a player by the side line had half its name cut off.
    const half = c.measureText(label).width / 2;
    const x = Math.min(ARENA_W - half - 2, Math.max(half + 2, e.x));
    c.fillText(label, x, e.y - PLAYER_R - 4);
  }

  private ball(e: Readonly<Entity<Field>>): void {
    const c = this.ctx;
    c.beginPath();
    c.arc(e.x, e.y, BALL_R, 0, Math.PI * 2);
    c.fillStyle = '#fafafa';
    c.fill();
    c.lineWidth = 2;
    c.strokeStyle = '#222';
    c.stroke();
  }
}

export const teamName = (team: number): string => TEAM_NAMES[team === 1 ? 1 : 0];

/** The arena's frame in the page: a section, its stage and the field's canvas, as players and spectators see it. */
export function arenaStage(label: string, className = 'hr-game'): { root: HTMLElement; stage: HTMLElement; canvas: HTMLCanvasElement } {
  const root = document.createElement('section');
  root.className = className;
  root.setAttribute('aria-label', label);
  const stage = document.createElement('div');
  stage.className = 'hr-game-stage';
  const canvas = document.createElement('canvas');
  canvas.className = 'hr-game-canvas';
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'the arena');
  stage.append(canvas);
  return { root, stage, canvas };
}
