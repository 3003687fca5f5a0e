// Draws the pitch, the two goals, the players, the ball and the score on a
// canvas scaled to fit its box (the state is in 1/256 px of a 640×360 pitch).
import { BALL, BALL_R, FP, GOAL_H, PAUSE, PITCH_H, PITCH_W, PLAYER_R, SCORE, type DuelState } from './sim';

const COLOURS = ['#4aa3ff', '#ff6b5b'] as const;
const GOAL_DEPTH = 12;

export function drawDuel(canvas: HTMLCanvasElement, s: DuelState, you: number, names: readonly string[]): void {
  const dpr = window.devicePixelRatio || 1;
  const box = canvas.getBoundingClientRect();
  const w = Math.max(1, Math.round(box.width * dpr));
  const h = Math.max(1, Math.round(box.height * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const c = canvas.getContext('2d');
  if (!c) return;
  const fullW = PITCH_W + 2 * GOAL_DEPTH;
  const k = Math.min(w / fullW, h / PITCH_H);
  c.setTransform(1, 0, 0, 1, 0, 0);
  c.fillStyle = '#10151c';
  c.fillRect(0, 0, w, h);
  c.setTransform(k, 0, 0, k, (w - fullW * k) / 2 + GOAL_DEPTH * k, (h - PITCH_H * k) / 2);
  c.fillStyle = '#1f5f35';
  c.fillRect(0, 0, PITCH_W, PITCH_H);
  c.strokeStyle = 'rgba(255,255,255,0.55)';
  c.lineWidth = 2;
  c.strokeRect(1, 1, PITCH_W - 2, PITCH_H - 2);
  c.beginPath();
  c.moveTo(PITCH_W / 2, 0);
  c.lineTo(PITCH_W / 2, PITCH_H);
  c.stroke();
  c.beginPath();
  c.arc(PITCH_W / 2, PITCH_H / 2, 40, 0, Math.PI * 2);
  c.stroke();
  const gy = (PITCH_H - GOAL_H) / 2;
  for (const [x, colour] of [[-GOAL_DEPTH, COLOURS[0]], [PITCH_W, COLOURS[1]]] as const) {
    c.fillStyle = colour;
    c.globalAlpha = 0.35;
    c.fillRect(x, gy, GOAL_DEPTH, GOAL_H);
    c.globalAlpha = 1;
  }
  const v = s.v;
  for (let i = 0; i < 2; i++) {
    const x = v[4 * i]! / FP;
    const y = v[4 * i + 1]! / FP;
    c.fillStyle = COLOURS[i]!;
    c.beginPath();
    c.arc(x, y, PLAYER_R, 0, Math.PI * 2);
    c.fill();
    if (i === you) {
      c.strokeStyle = '#fff';
      c.lineWidth = 2.5;
      c.stroke();
    }
    c.fillStyle = '#fff';
    c.font = '11px system-ui, sans-serif';
    c.textAlign = 'center';
    c.fillText(i === you ? 'you' : (names[i] ?? ''), x, y - PLAYER_R - 4);
  }
  c.fillStyle = '#f4f4f4';
  c.beginPath();
  c.arc(v[BALL]! / FP, v[BALL + 1]! / FP, BALL_R, 0, Math.PI * 2);
  c.fill();
  c.font = 'bold 28px system-ui, sans-serif';
  c.textAlign = 'center';
  c.fillStyle = 'rgba(255,255,255,0.85)';
  c.fillText(`${v[SCORE]} : ${v[SCORE + 1]}`, PITCH_W / 2, 34);
  if (v[PAUSE]! > 0) {
    c.font = 'bold 22px system-ui, sans-serif';
    c.fillText('Goal!', PITCH_W / 2, PITCH_H / 2 - 52);
  }
}
