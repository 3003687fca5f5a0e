// Pong as an SDK Game: mount it over a RoomSession and it plays. The host's
// tab runs the Match (rules.ts) under NetHost, the authority; a client's tab
// runs NetClient, which predicts its own paddle and draws the ball and the
// other paddle interpolated from the host's snapshots.
import { NetClient, NetHost, sessionTransport, type NetPlayer, type ReadonlyEntityMap } from '@hostrelay/netcode';
import type { Game, GameContext, RunningGame } from '@hostrelay/sdk';
import { BALL_ID, BALL_R, BOARD_ID, H, Match, movePaddle, PADDLE_H, PADDLE_W, Phase, pongGame, W, type Field, type PongInput, type Side } from './rules';

export const pong: Game = { mode: 'Pong', mount: mountPong };

/**
 * What this tab shows, published as window.pong for the example's browser
 * test (e2e/example-pong.test.ts) and for poking at in the console. Read
 * only: the game never reads it back. A game of your own can leave it out.
 */
export interface PongState {
  readonly role: 'host' | 'client';
  /** Our paddle, or null while connecting or watching. */
  readonly side: Side | null;
  readonly phase: number;
  readonly score: readonly [number, number];
  /** Each paddle's y as drawn here: ours predicted, the other interpolated (null: nobody there). */
  readonly paddles: { readonly left: number | null; readonly right: number | null };
  readonly ball: { readonly x: number; readonly y: number } | null;
  /** Frames drawn so far. */
  readonly frames: number;
}

declare global {
  interface Window {
    pong?: PongState;
  }
}

export function mountPong({ session, container }: GameContext): RunningGame {
  const root = document.createElement('section');
  root.className = 'pong';
  root.innerHTML = `
    <div class="pong-score"><span class="pong-name"></span><b class="pong-points">0 : 0</b><span class="pong-name"></span></div>
    <div class="pong-stage"><canvas aria-label="Pong"></canvas></div>
    <p class="pong-status" role="status"></p>`;
  container.append(root);
  const [nameL, nameR] = root.querySelectorAll<HTMLElement>('.pong-name');
  const points = root.querySelector<HTMLElement>('.pong-points')!;
  const stage = root.querySelector<HTMLElement>('.pong-stage')!;
  const canvas = root.querySelector('canvas')!;
  const status = root.querySelector<HTMLElement>('.pong-status')!;
  const ctx = canvas.getContext('2d')!;

  let view = new DOMMatrix();
  const controls = new Controls(canvas, (x, y) => view.inverse().transformPoint(new DOMPoint(x, y)).y);
  const transport = sessionTransport(session);

  // The host is the authority: it runs the match and sends snapshots.
  let host: NetHost<PongInput, Field> | null = null;
  // A client sends inputs, predicts its own paddle, interpolates the rest.
  let client: NetClient<PongInput, Field> | null = null;
  if (session.role === 'host') {
    const match = new Match();
    host = new NetHost<PongInput, Field>({
      transport,
      game: pongGame,
      readInput: controls.read,
      step: ({ inputs, dt }) => match.step(inputs, dt),
      capture: () => match.entities(),
    });
    host.on('playerJoin', (p) => match.join(p.id, p.slot));
    host.on('playerLeave', (p) => match.leave(p.id));
    host.start();
  } else {
    client = new NetClient<PongInput, Field>({
      transport,
      game: pongGame,
      readInput: controls.read,
      predict: movePaddle, // the host's own rule for a paddle, so a prediction is almost never wrong
      smoothFields: ['y'],
    });
    client.start();
  }

  let ended: string | null = null;
  const offClosed = session.on('closed', (reason) => {
    ended = reason === 'host_left' ? 'The host left: the game is over.' : `The game ended (${reason}).`;
    host?.stop();
    client?.stop();
  });

  const nameOf = (players: readonly NetPlayer[], slot: number | undefined): string => {
    const id = players.find((p) => p.slot === slot)?.id;
    return session.players.find((p) => p.id === id)?.name ?? '';
  };

  const touch = matchMedia('(pointer: coarse)').matches;
  let fitted = '';
  let frames = 0;
  const render = (): void => {
    // The host draws its world blended between ticks; a client draws what NetClient makes of the snapshots.
    const { entities } = (host ?? client!).frame();
    const mySlot = host ? 0 : client!.slot;
    const players = host ? host.players : client!.players;
    const slots: Record<Side, number | undefined> = { left: undefined, right: undefined };
    for (const [id, e] of entities) if (id < 256) slots[e.x < W / 2 ? 'left' : 'right'] = id;
    const side: Side | null = mySlot === null ? null : slots.left === mySlot ? 'left' : slots.right === mySlot ? 'right' : null;
    const board = entities.get(BOARD_ID);
    const phase = board?.phase ?? Phase.Waiting;

    // Refit the canvas when the space for it (or our side, which a tall screen puts at the bottom) changed.
    const key = `${stage.clientWidth}x${stage.clientHeight}@${devicePixelRatio}:${side}`;
    if (key !== fitted) {
      fitted = key;
      view = fit(stage, canvas, side);
    }
    const names = { left: nameOf(players, slots.left), right: nameOf(players, slots.right) };
    let message = '';
    if (ended) message = 'Game over';
    else if (!board) message = 'Connecting…';
    else if (phase === Phase.Waiting) message = 'Waiting for an opponent…';
    else if (phase === Phase.Over) message = `${board.scoreL > board.scoreR ? names.left : names.right} wins!`;
    draw(ctx, view, entities, mySlot, message);

    const you = (s: Side): string => (side === s ? `${names[s]} (you)` : names[s]);
    setText(nameL!, you('left'));
    setText(nameR!, you('right'));
    setText(points, `${board?.scoreL ?? 0} : ${board?.scoreR ?? 0}`);
    setText(
      status,
      ended ??
        (!board
          ? 'Connecting to the host…'
          : side
            ? `You are the yellow paddle: ${touch ? 'drag anywhere on the field' : 'W/S or ↑/↓, or drag with the mouse'}.`
            : 'Two players are already playing: you are watching.'),
    );
    const ball = entities.get(BALL_ID);
    const paddle = (s: Side): number | null => entities.get(slots[s] ?? -1)?.y ?? null;
    window.pong = {
      role: host ? 'host' : 'client',
      side,
      phase,
      score: [board?.scoreL ?? 0, board?.scoreR ?? 0],
      paddles: { left: paddle('left'), right: paddle('right') },
      ball: ball ? { x: ball.x, y: ball.y } : null,
      frames: ++frames,
    };
  };
  let frame = requestAnimationFrame(function loop() {
    render();
    frame = requestAnimationFrame(loop);
  });

  let stopped = false;
  return {
    stats: () => ({ rttMs: client?.stats().rttMs ?? null }),
    stop() {
      if (stopped) return;
      stopped = true;
      cancelAnimationFrame(frame);
      offClosed();
      host?.stop();
      client?.stop();
      transport.dispose();
      controls.dispose();
      root.remove();
      delete window.pong;
    },
  };
}

const setText = (el: HTMLElement, text: string): void => {
  if (el.textContent !== text) el.textContent = text;
};

/**
 * Sizes the canvas to the largest field that fits the stage and returns the
 * world → canvas pixels transform. On a tall screen (a phone held upright)
 * the field is turned a quarter, our paddle at the bottom under the thumb.
 */
function fit(stage: HTMLElement, canvas: HTMLCanvasElement, side: Side | null): DOMMatrix {
  const wide = Math.min(stage.clientWidth / W, stage.clientHeight / H);
  const tall = Math.min(stage.clientWidth / H, stage.clientHeight / W);
  const turn = tall > wide * 1.2;
  const s = turn ? tall : wide;
  canvas.style.width = `${(turn ? H : W) * s}px`;
  canvas.style.height = `${(turn ? W : H) * s}px`;
  const k = s * devicePixelRatio;
  canvas.width = Math.round((turn ? H : W) * k);
  canvas.height = Math.round((turn ? W : H) * k);
  if (!turn) return new DOMMatrix([k, 0, 0, k, 0, 0]);
  // (x, y) → (H − y, x) puts the right wall at the bottom; (x, y) → (y, W − x) the left one.
  return side === 'right' ? new DOMMatrix([0, k, -k, 0, H * k, 0]) : new DOMMatrix([0, -k, k, 0, 0, W * k]);
}

function draw(ctx: CanvasRenderingContext2D, view: DOMMatrix, entities: ReadonlyEntityMap<Field>, mySlot: number | null, message: string): void {
  const { width, height } = ctx.canvas;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#0f1729';
  ctx.fillRect(0, 0, width, height);
  ctx.setTransform(view);
  ctx.strokeStyle = 'rgba(255, 255, 255, 0.2)';
  ctx.lineWidth = 4;
  ctx.setLineDash([12, 14]);
  ctx.beginPath();
  ctx.moveTo(W / 2, 0);
  ctx.lineTo(W / 2, H);
  ctx.stroke();
  ctx.setLineDash([]);
  for (const [id, e] of entities) {
    if (id === BALL_ID) {
      ctx.fillStyle = '#fff';
      ctx.beginPath();
      ctx.arc(e.x, e.y, BALL_R, 0, Math.PI * 2);
      ctx.fill();
    } else if (id < 256) {
      ctx.fillStyle = id === mySlot ? '#ffcf33' : '#e8ecf4';
      ctx.beginPath();
      ctx.roundRect(e.x - PADDLE_W / 2, e.y - PADDLE_H / 2, PADDLE_W, PADDLE_H, PADDLE_W / 2);
      ctx.fill();
    }
  }
  if (!message) return;
  // Upright whatever the field's turn, and no wider than 80 % of it.
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.font = `600 100px system-ui, sans-serif`;
  const size = Math.floor(Math.min(height / 16, (100 * width * 0.8) / ctx.measureText(message).width));
  ctx.font = `600 ${size}px system-ui, sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = 'rgba(15, 23, 41, 0.85)';
  const w = ctx.measureText(message).width + size;
  ctx.fillRect((width - w) / 2, height / 2 - size, w, size * 2);
  ctx.fillStyle = '#fff';
  ctx.fillText(message, width / 2, height / 2);
}

const KEYS: Record<string, 'up' | 'down'> = { KeyW: 'up', ArrowUp: 'up', KeyS: 'down', ArrowDown: 'down' };

/**
 * Keys and a pointer as one PongInput. A finger (or a held mouse button) on
 * the field sets where the paddle goes, in world units through the inverse
 * of the view; the paddle stays there when it lifts. A key clears the aim.
 */
class Controls {
  private readonly held = new Set<'up' | 'down'>();
  private aim: number | null = null;
  private readonly offs: (() => void)[] = [];

  constructor(canvas: HTMLCanvasElement, toWorldY: (canvasX: number, canvasY: number) => number) {
    const on = <K extends keyof HTMLElementEventMap>(target: HTMLElement | Window, type: K, fn: (e: HTMLElementEventMap[K]) => void): void => {
      target.addEventListener(type, fn as EventListener);
      this.offs.push(() => target.removeEventListener(type, fn as EventListener));
    };
    on(window, 'keydown', (e) => {
      const key = KEYS[e.code];
      if (!key || e.target instanceof HTMLInputElement) return;
      this.held.add(key);
      this.aim = null;
      e.preventDefault(); // arrows would scroll the page
    });
    on(window, 'keyup', (e) => {
      const key = KEYS[e.code];
      if (key) this.held.delete(key);
    });
    on(window, 'blur', () => this.held.clear()); // a key held while focus leaves never sees its keyup
    const point = (e: PointerEvent): void => {
      const r = canvas.getBoundingClientRect();
      this.aim = toWorldY(((e.clientX - r.left) * canvas.width) / r.width, ((e.clientY - r.top) * canvas.height) / r.height);
    };
    on(canvas, 'pointerdown', (e) => {
      canvas.setPointerCapture(e.pointerId);
      point(e);
    });
    on(canvas, 'pointermove', (e) => {
      if (canvas.hasPointerCapture(e.pointerId)) point(e);
    });
  }

  read = (): PongInput => ({ up: this.held.has('up'), down: this.held.has('down'), aim: this.aim === null ? null : Math.round(this.aim) });

  dispose(): void {
    for (const off of this.offs.splice(0)) off();
  }
}
