import type { RoomSession } from '@hostrelay/sdk';
import { PacketKind, decodePacket, echoOf, encodePacket } from './packets';
import { followPointer, type Point } from './pointer-input';
import { RttWindow } from './rtt';

/** How often a client sends its pointer, like a game's input tick. */
const SEND_HZ = 30;

export interface DemoStats {
  rttMs: number | null;
}

/**
 * Where a player's marker starts before its pointer moves: one of 16 spots
 * on an ellipse around the centre, by join order. Starting everyone at the
 * centre put the host's "you" marker on top of each client's label until
 * someone moved. The spots are taken in bit-reversed order (0, 8, 4, 12…) so
 * the first few players start far apart, and all 16 stay distinct.
 */
export function startSpot(index: number): Point {
  const i = Math.max(0, index) % 16;
  const slot = ((i & 1) << 3) | ((i & 2) << 1) | ((i & 4) >> 1) | ((i & 8) >> 3);
  const angle = (slot * 2 * Math.PI) / 16;
  return { x: 0.5 + 0.3 * Math.cos(angle), y: 0.5 + 0.32 * Math.sin(angle) };
}

function hueOf(id: string): number {
  let h = 0;
  for (const ch of id) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return (h * 47) % 360;
}

/**
 * The live demo: each client sends its pointer to the host over the
 * unreliable "game" channel; the host draws every client's pointer and
 * echoes each packet back, and the client measures the round trip.
 */
export class PointerDemo {
  private readonly rtt = new RttWindow(64);
  private readonly remote = new Map<string, Point>(); // host: clients' pointers; client: the host's echo
  private local: Point;
  private seq = 0;
  private readonly timers: number[] = [];
  /** The requested frame, or 0: the canvas is drawn only when what it shows changed. */
  private frame = 0;
  private readonly offs: (() => void)[] = [];
  private stopped = false;
  /** Canvas pixels per screen pixel. */
  private k = 1;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly session: RoomSession,
    private readonly nameOf: (id: string) => string,
  ) {
    this.local = startSpot(session.players.findIndex((p) => p.id === session.you));
    this.offs.push(
      session.on('message', (peerId, data, channel) => {
        if (channel === 'game') this.onPacket(peerId, data);
      }),
      session.on('peerClose', (peerId) => {
        if (this.remote.delete(peerId)) this.invalidate();
      }),
      // The first pointer goes the moment the link opens, not at the next tick.
      session.on('peerOpen', () => {
        if (this.session.role === 'client') this.sendPointer();
      }),
      // Labels are names, which can come after a player's first pointer.
      session.on('playerJoined', () => this.invalidate()),
      session.on('playerUpdated', () => this.invalidate()),
    );
    // A finger's drag is the game's, not the page's: no scrolling or zooming while it steers.
    canvas.style.touchAction = 'none';
    this.offs.push(
      followPointer(canvas, (p) => {
        this.local = p;
        this.invalidate();
      }),
    );
    if (session.role === 'client') this.timers.push(window.setInterval(() => this.sendPointer(), 1000 / SEND_HZ));
    // Text and dots are sized in screen pixels, and the colours follow the
    // theme: a new size or scheme is a new picture.
    if (typeof ResizeObserver === 'function') {
      const resized = new ResizeObserver(() => this.invalidate());
      resized.observe(canvas);
      this.offs.push(() => resized.disconnect());
    }
    if (typeof matchMedia === 'function') {
      const scheme = matchMedia('(prefers-color-scheme: dark)');
      const redraw = (): void => this.invalidate();
      scheme.addEventListener('change', redraw);
      this.offs.push(() => scheme.removeEventListener('change', redraw));
    }
    this.invalidate();
  }

  /**
   * Draws at the next frame, once however often it is asked. Redrawing an
   * unchanged canvas 60 times a second cost the host's tab and the browser's
   * compositor a fifth of a core (measured with a running game and nobody
   * moving): battery on a phone, and CPU a joining player's connection
   * waits for when both tabs share a machine.
   */
  private invalidate(): void {
    if (this.frame !== 0 || this.stopped) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  get stats(): DemoStats {
    return { rttMs: this.rtt.median() };
  }

  /** This tab's marker, and the pointers it has from others (host) or the host's echo of its own (client). */
  get pointers(): { local: Point; remote: [string, Point][] } {
    return { local: { ...this.local }, remote: [...this.remote].map(([id, p]) => [id, { ...p }]) };
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    for (const off of this.offs) off();
  }

  private sendPointer(): void {
    this.seq = (this.seq + 1) >>> 0;
    this.session.broadcast(
      encodePacket({ kind: PacketKind.Pointer, seq: this.seq, x: this.local.x, y: this.local.y, sentAt: performance.now() }),
    );
  }

  private onPacket(peerId: string, data: ArrayBuffer | string): void {
    const p = decodePacket(data);
    if (!p) return;
    switch (p.kind) {
      case PacketKind.Test: // the e2e build's numbered packets (test-traffic.ts)
        return;
      case PacketKind.Pointer:
        if (this.session.role !== 'host' || typeof data === 'string') return;
        this.moveRemote(peerId, p);
        this.session.send(peerId, echoOf(data));
        return;
      case PacketKind.Echo:
        if (this.session.role !== 'client') return;
        this.rtt.add(performance.now() - p.sentAt);
        this.moveRemote(peerId, p);
        return;
    }
  }

  /** A pointer sent 30 times a second mostly stands still: only a move is a new picture. */
  private moveRemote(peerId: string, p: Point): void {
    const was = this.remote.get(peerId);
    if (was && was.x === p.x && was.y === p.y) return;
    this.remote.set(peerId, { x: p.x, y: p.y });
    this.invalidate();
  }

  private draw(): void {
    const c = this.canvas;
    const ctx = c.getContext('2d');
    if (!ctx) return;
    const { width: w, height: h } = c;
    const style = getComputedStyle(c);
    ctx.clearRect(0, 0, w, h);
    ctx.strokeStyle = style.getPropertyValue('--grid').trim() || '#8884';
    ctx.lineWidth = 1;
    for (let x = 0; x <= w; x += 40) {
      ctx.beginPath();
      ctx.moveTo(x + 0.5, 0);
      ctx.lineTo(x + 0.5, h);
      ctx.stroke();
    }
    for (let y = 0; y <= h; y += 40) {
      ctx.beginPath();
      ctx.moveTo(0, y + 0.5);
      ctx.lineTo(w, y + 0.5);
      ctx.stroke();
    }
    // The canvas is scaled down by CSS on a phone: size text and dots in
    // screen pixels so they stay readable.
    this.k = c.clientWidth > 0 ? Math.max(1, c.width / c.clientWidth) : 1;
    ctx.font = `${Math.round(14 * this.k)}px system-ui, sans-serif`;
    ctx.textBaseline = 'middle';
    const ink = style.color || '#222';
    for (const [id, p] of this.remote) {
      // A client sees its own pointer as the host echoed it: the ring lags by one round trip.
      const label = this.session.role === 'host' ? this.nameOf(id) : 'seen by host';
      const hue = hueOf(this.session.role === 'host' ? id : this.session.you);
      this.dot(ctx, p, w, h, `hsl(${hue} 70% 50%)`, this.session.role === 'client', label, ink);
    }
    this.dot(ctx, this.local, w, h, `hsl(${hueOf(this.session.you)} 70% 50%)`, false, 'you', ink);
  }

  private dot(
    ctx: CanvasRenderingContext2D,
    p: Point,
    w: number,
    h: number,
    color: string,
    ring: boolean,
    label: string,
    ink: string,
  ): void {
    const x = p.x * w;
    const y = p.y * h;
    ctx.beginPath();
    const k = this.k;
    ctx.arc(x, y, (ring ? 12 : 8) * k, 0, Math.PI * 2);
    if (ring) {
      ctx.strokeStyle = color;
      ctx.lineWidth = 3 * k;
      ctx.stroke();
    } else {
      ctx.fillStyle = color;
      ctx.fill();
    }
    ctx.fillStyle = ink;
    // The echo ring sits under the local dot most of the time: label it below.
    if (ring) {
      ctx.textAlign = 'center';
      ctx.fillText(label, x, y + 26 * k);
      ctx.textAlign = 'start';
    } else {
      ctx.fillText(label, x + 16 * k, y);
    }
  }
}
