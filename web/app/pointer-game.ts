import { PointerDemo, type DemoStats } from './demo';
import type { GameHandle, MountGameOptions } from './game-mount';

/** The pointer demo behind the mountGame contract, with its stats for window.hostrelay. */
export interface PointerGameHandle extends GameHandle {
  stats(): DemoStats;
}

export function mountGame({ session, container }: MountGameOptions): PointerGameHandle {
  let demo = mountDemo(session, container);
  // The demo has no state worth handing over: after a host change it simply
  // starts again in this tab's new role.
  const off = session.on('hostChanged', () => {
    demo.stop();
    demo = mountDemo(session, container);
  });
  return {
    stats: () => demo.stats,
    dispose() {
      off();
      demo.stop();
      container.replaceChildren();
    },
  };
}

function mountDemo(session: MountGameOptions['session'], container: HTMLElement): PointerDemo {
  const help = document.createElement('p');
  help.className = 'hint';
  help.id = 'demo-help';
  help.textContent =
    session.role === 'host'
      ? 'Each player’s pointer arrives here over the unreliable game channel; this tab echoes it back.'
      : 'Move your pointer over the canvas: it goes to the host 30 times a second. The ring is what the host echoed back.';
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
