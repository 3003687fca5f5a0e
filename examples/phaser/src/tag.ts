// Tag as an SDK Game: mount it over a RoomSession and it plays. Every tab
// runs a Phaser game with the same scene (scene.ts) to draw and steer. The
// host's tab also runs the world in Phaser's arcade physics (world.ts) under
// NetHost, the authority; a client's tab runs NetClient, which predicts its
// own player and draws the others interpolated from the host's snapshots.
import { NetClient, NetHost, sessionTransport, type Correction, type NetPlayer } from '@hostrelay/netcode';
import type { Game, GameContext, RunningGame } from '@hostrelay/sdk';
import * as Phaser from 'phaser';
import { movePlayer, tagGame, type Field, type TagInput } from './rules';
import { TagScene } from './scene';
import { TagWorld } from './world';

export const tag: Game = { mode: 'Tag', mount: mountTag };

/**
 * What this tab shows, published as window.tag for the example's browser
 * test (e2e/example-phaser.test.ts) and for poking at in the console. Read
 * only: the game never reads it back. A game of your own can leave it out.
 */
export interface TagState {
  readonly role: 'host' | 'client';
  /** Our slot (our player's entity id), or null until the host has welcomed us. */
  readonly slot: number | null;
  /** Every player as drawn here: ours predicted (on a client), the others interpolated. */
  readonly players: readonly { slot: number; name: string; x: number; y: number; it: boolean; frozen: boolean; tags: number }[];
  /** Arcade bodies in the host's physics world (0 on a client, which has none). */
  readonly bodies: number;
  /** Client: predictions the host overruled though no input was late (a bump only the host's physics saw). */
  readonly mispredictions: number;
  /** Frames drawn so far. */
  readonly frames: number;
}

declare global {
  interface Window {
    tag?: TagState;
  }
}

export function mountTag({ session, container }: GameContext): RunningGame {
  const root = document.createElement('section');
  root.className = 'tag';
  root.innerHTML = `
    <p class="tag-status" role="status">Starting…</p>
    <div class="tag-stage"></div>
    <ol class="tag-board" aria-label="Tags made"></ol>`;
  container.append(root);
  const status = root.querySelector<HTMLElement>('.tag-status')!;
  const stage = root.querySelector<HTMLElement>('.tag-stage')!;
  const board = root.querySelector<HTMLElement>('.tag-board')!;
  const transport = sessionTransport(session);

  let host: NetHost<TagInput, Field> | null = null;
  let client: NetClient<TagInput, Field> | null = null;
  let world: TagWorld | null = null;
  let mispredictions = 0;
  let frames = 0;
  let ended: string | null = null;
  let stopped = false;

  const touch = matchMedia('(pointer: coarse)').matches;
  const nameOf = (players: readonly NetPlayer[], slot: number): string => {
    const id = players.find((p) => p.slot === slot)?.id;
    return session.players.find((p) => p.id === id)?.name ?? '…';
  };

  // Phaser starts the scene on its own schedule; the netcode starts once the
  // scene (its keyboard, pointers and, on the host, its physics) exists.
  const scene = new TagScene((s) => {
    if (stopped) return;
    if (session.role === 'host') {
      const w = (world = new TagWorld(s.physics));
      host = new NetHost<TagInput, Field>({
        transport,
        game: tagGame,
        readInput: s.readInput,
        step: ({ inputs, dt }) => w.step(inputs, dt),
        capture: () => w.entities(),
      });
      host.on('playerJoin', (p) => w.join(p.id, p.slot));
      host.on('playerLeave', (p) => w.leave(p.id));
      host.start();
    } else {
      client = new NetClient<TagInput, Field>({
        transport,
        game: tagGame,
        readInput: s.readInput,
        predict: movePlayer, // Phaser's arcade arithmetic for one free body (rules.ts)
        smoothFields: ['x', 'y'],
      });
      client.on('correction', (c: Correction) => {
        if (c.lateTicks === 0) mispredictions++;
      });
      client.start();
    }
    s.draw = render;
  });

  const game = new Phaser.Game({
    // A few circles and labels: the canvas renderer draws them as fast as WebGL would, on every device.
    type: Phaser.CANVAS,
    parent: stage,
    backgroundColor: '#0b1120',
    // Sized by hand below: Phaser's own RESIZE mode draws at CSS pixels, blurry on a phone's screen.
    scale: { mode: Phaser.Scale.NONE, width: 1, height: 1 },
    physics: { default: 'arcade', arcade: { gravity: { x: 0, y: 0 } } },
    audio: { noAudio: true },
    banner: false,
    scene,
  });

  // The canvas fills the stage at the screen's own pixels (devicePixelRatio of
  // them per CSS pixel), shown at 1/ratio: sharp on a phone. The scene zooms
  // its camera to whatever size this gives it.
  const fitCanvas = (): void => {
    if (!game.isBooted) return; // no canvas yet: READY calls again
    const k = Math.min(3, devicePixelRatio || 1);
    game.scale.resize(Math.max(1, Math.round(stage.clientWidth * k)), Math.max(1, Math.round(stage.clientHeight * k)));
    game.scale.setZoom(1 / k); // after resize: only setZoom restyles the canvas when the zoom stays 1
  };
  const resized = new ResizeObserver(fitCanvas);
  resized.observe(stage);
  game.events.once(Phaser.Core.Events.READY, fitCanvas);

  const offClosed = session.on('closed', (reason) => {
    ended = reason === 'host_left' ? 'The host left: the game is over.' : `The game ended (${reason}).`;
    host?.stop();
    client?.stop();
  });

  function render(): ReturnType<NonNullable<TagScene['draw']>> {
    const net = (host ?? client)!;
    const { entities } = net.frame();
    const mySlot = host ? 0 : client!.slot;
    const players = [...entities].map(([slot, e]) => ({
      slot,
      name: nameOf(net.players, slot),
      x: e.x,
      y: e.y,
      it: e.it === 1,
      frozen: e.cool > 0,
      tags: e.tags,
    }));
    const it = players.find((p) => p.it);
    const me = players.find((p) => p.slot === mySlot);
    const how = touch ? 'put a thumb anywhere and drag' : 'arrows or WASD, or drag with the mouse';
    setText(
      status,
      ended ??
        (!me
          ? 'Connecting to the host…'
          : players.length < 2
            ? `Waiting for players: send them the link. Move: ${how}.`
            : me.it
              ? `You are it: tag someone! (${how})`
              : `Run from ${it?.name ?? '…'}! (${how})`),
    );
    const rows = [...players].sort((a, b) => b.tags - a.tags || a.slot - b.slot);
    const html = rows.map((p) => `<li${p.it ? ' class="it"' : ''}><span></span><b>${p.tags}</b></li>`).join('');
    if (board.dataset['rows'] !== html) {
      board.dataset['rows'] = html;
      board.innerHTML = html;
    }
    rows.forEach((p, i) => setText(board.children[i]!.firstElementChild as HTMLElement, `${p.name}${p.slot === mySlot ? ' (you)' : ''}`));
    window.tag = {
      role: host ? 'host' : 'client',
      slot: mySlot,
      players,
      bodies: world?.bodyCount ?? 0,
      mispredictions,
      frames: ++frames,
    };
    return { entities, mySlot, nameOf: (slot) => nameOf(net.players, slot) };
  }

  return {
    stats: () => ({ rttMs: client?.stats().rttMs ?? null }),
    stop() {
      if (stopped) return;
      stopped = true;
      offClosed();
      host?.stop();
      client?.stop();
      transport.dispose();
      resized.disconnect();
      game.destroy(true);
      root.remove();
      delete window.tag;
    },
  };
}

const setText = (el: HTMLElement, text: string): void => {
  if (el.textContent !== text) el.textContent = text;
};
