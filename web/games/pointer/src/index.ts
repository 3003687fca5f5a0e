// The pointer demo: each client's pointer goes to the host over the
// unreliable game channel and comes back as an echo. The smallest game there
// is, and the one the native client (hostrelay-bot) speaks, so the lobby
// plays it in any room whose mode it has no game for.
import type { Game, GameContext, RoomSession, RunningGame } from '@hostrelay/sdk';
import { PointerDemo } from './demo';
import { publishPointerHooks } from './test-hooks';

export { PacketKind, decodePacket, echoOf, encodePacket, type Packet, type PointerPacket, type TestPacket } from './packets';
export { RttWindow } from './rtt';
export { startSpot } from './demo';

export const pointer: Game = {
  mode: 'Pointer demo',
  mount: mountPointer,
};

export function mountPointer({ session, container }: GameContext): RunningGame {
  let demo = mountDemo(session, container);
  // The demo has no state worth handing over: after a host change it simply
  // starts again in this tab's new role.
  const off = session.on('hostChanged', () => {
    demo.stop();
    demo = mountDemo(session, container);
  });
  // window.hostrelayPointer, in the e2e build only: elsewhere the condition
  // is a constant false and the bundle leaves the hooks out.
  let unpublish: (() => void) | null = null;
  if (import.meta.env.MODE === 'e2e') {
    unpublish = publishPointerHooks({
      role: () => session.role,
      local: () => demo.pointers.local,
      remote: () => demo.pointers.remote,
    });
  }
  let stopped = false;
  return {
    stats: () => demo.stats,
    stop() {
      if (stopped) return;
      stopped = true;
      off();
      unpublish?.();
      demo.stop();
      container.replaceChildren();
    },
  };
}

/** A phone or tablet: the primary pointer is a finger, so the help speaks of touching, not hovering. */
const touchFirst = (): boolean => typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;

function mountDemo(session: RoomSession, container: HTMLElement): PointerDemo {
  const help = document.createElement('p');
  help.className = 'hint';
  help.id = 'demo-help';
  help.textContent =
    session.role === 'host'
      ? 'Each player’s pointer arrives here over the unreliable game channel; this tab echoes it back.'
      : `${touchFirst() ? 'Touch and drag on' : 'Move your pointer over'} the canvas: it goes to the host 30 times a second. The ring is what the host echoed back.`;
  const canvas = document.createElement('canvas');
  canvas.id = 'demo-canvas';
  canvas.width = 640;
  canvas.height = 400;
  canvas.setAttribute('aria-describedby', help.id);
  canvas.setAttribute('aria-label', 'Pointer demo');
  container.replaceChildren(help, canvas);
  const nameOf = (id: string): string => session.players.find((p) => p.id === id)?.name ?? id;
  return new PointerDemo(canvas, session, nameOf);
}
