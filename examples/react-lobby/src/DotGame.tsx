// The field: a canvas drawn from @hostrelay/netcode. On the host, useNetHost
// runs the match (rules.ts) at a fixed tick; on a client, useNetClient
// sends the pointer and draws the host's snapshots. Both hooks are always
// called: each is null on the side it is not for.
import { useNetClient, useNetHost, useRoomContext } from '@hostrelay/react';
import type { NetPlayer, ReadonlyEntityMap } from '@hostrelay/netcode';
import { useEffect, useRef, useState, type PointerEvent, type ReactNode } from 'react';
import { DOT_ID, DOT_R, DotMatch, dotGame, H, W, type DotInput, type Field } from './rules';

/** The room mode parties of this game are made with (the room list shows only these). */
export const MODE = 'dots';

const COLOURS = ['#f472b6', '#38bdf8', '#facc15', '#4ade80', '#a78bfa', '#fb923c', '#f87171', '#2dd4bf'];
const colour = (slot: number): string => COLOURS[slot % COLOURS.length]!;

/** What the field shows, for e2e/example-react-lobby.test.ts. */
export interface CatchState {
  role: 'host' | 'client';
  slot: number | null;
  dot: { x: number; y: number } | null;
  /** Each player's catches this round, by name. */
  scores: Record<string, number>;
  rounds: number;
  frames: number;
}

declare global {
  interface Window {
    catchDot?: CatchState;
  }
}

interface Score {
  slot: number;
  name: string;
  score: number;
}

export function DotGame(): ReactNode {
  const room = useRoomContext();
  const canvas = useRef<HTMLCanvasElement>(null);
  const pointer = useRef<DotInput>({ x: W / 2, y: H / 2, clicks: 0 });
  const [match] = useState(() => new DotMatch(Date.now()));
  const readInput = (): DotInput => pointer.current;

  const host = useNetHost({
    game: dotGame,
    readInput,
    step: ({ inputs }) => match.step(inputs),
    capture: () => match.capture(),
    on: { playerJoin: (p) => match.join(p.id, p.slot), playerLeave: (p) => match.leave(p.id) },
  });
  const client = useNetClient({ game: dotGame, readInput });

  const players = useRef(room.players);
  players.current = room.players;
  const [scores, setScores] = useState<Score[]>([]);

  useEffect(() => {
    const el = canvas.current;
    if (!el || (!host && !client)) return undefined;
    const ctx = el.getContext('2d')!;
    let frames = 0;
    let shown = '';
    let raf = requestAnimationFrame(function render() {
      raf = requestAnimationFrame(render);
      const view = host ? host.frame() : client!.frame();
      const roster: readonly NetPlayer[] = host ? host.players : client!.players;
      const mine = host ? 0 : client!.slot;
      draw(ctx, el, view.entities, mine);
      const list = roster.map((p) => ({
        slot: p.slot,
        name: players.current.find((m) => m.id === p.id)?.name ?? '…',
        score: view.entities.get(p.slot)?.score ?? 0,
      }));
      const dot = view.entities.get(DOT_ID);
      window.catchDot = {
        role: host ? 'host' : 'client',
        slot: mine,
        dot: dot ? { x: dot.x, y: dot.y } : null,
        scores: Object.fromEntries(list.map((s) => [s.name, s.score])),
        rounds: dot?.score ?? 0,
        frames: ++frames,
      };
      const key = JSON.stringify(list);
      if (key !== shown) {
        shown = key;
        setScores(list);
      }
    });
    return () => cancelAnimationFrame(raf);
  }, [host, client]);

  const aim = (e: PointerEvent<HTMLCanvasElement>): void => {
    const r = e.currentTarget.getBoundingClientRect();
    pointer.current = { ...pointer.current, x: ((e.clientX - r.left) / r.width) * W, y: ((e.clientY - r.top) / r.height) * H };
  };
  return (
    <div className="field">
      <canvas
        ref={canvas}
        onPointerMove={aim}
        onPointerDown={(e) => {
          aim(e);
          pointer.current = { ...pointer.current, clicks: (pointer.current.clicks + 1) & 0xff };
        }}
      />
      <ol className="scores">
        {[...scores]
          .sort((a, b) => b.score - a.score)
          .map((s) => (
            <li key={s.slot} style={{ color: colour(s.slot) }}>
              <span>{s.name}</span> <b>{s.score}</b>
            </li>
          ))}
      </ol>
    </div>
  );
}

function draw(ctx: CanvasRenderingContext2D, el: HTMLCanvasElement, entities: ReadonlyEntityMap<Field>, mine: number | null): void {
  const dpr = window.devicePixelRatio || 1;
  const [w, h] = [Math.round(el.clientWidth * dpr), Math.round(el.clientHeight * dpr)];
  if (el.width !== w || el.height !== h) [el.width, el.height] = [w, h];
  ctx.setTransform(w / W, 0, 0, h / H, 0, 0);
  ctx.fillStyle = '#0f172a';
  ctx.fillRect(0, 0, W, H);
  for (const [id, e] of entities) {
    ctx.beginPath();
    if (id === DOT_ID) {
      ctx.fillStyle = '#f8fafc';
      ctx.arc(e.x, e.y, DOT_R, 0, Math.PI * 2);
      ctx.fill();
      continue;
    }
    ctx.fillStyle = colour(id);
    ctx.arc(e.x, e.y, id === mine ? 9 : 6, 0, Math.PI * 2);
    ctx.fill();
    if (id === mine) {
      ctx.strokeStyle = '#f8fafc';
      ctx.lineWidth = 2;
      ctx.stroke();
    }
  }
}
