// window.hostrelayPointer: what the pointer demo shows, for the end-to-end
// tests (a finger's drag on a phone must reach the host). In the e2e build
// only (vite build --mode e2e): index.ts publishes it behind
// import.meta.env.MODE === 'e2e', so the production bundle has none of it
// (make web checks it).
import type { Point } from './pointer-input';

export interface HostrelayPointerHooks {
  /** This tab's role in the demo now (it follows host changes). */
  role(): 'host' | 'client';
  /** This tab's own marker, 0–1 across and down the canvas. */
  local(): Point;
  /** Host: each client's pointer by player id, as last received. Client: the host's echo of its own. */
  remote(): [string, Point][];
}

declare global {
  interface Window {
    hostrelayPointer?: HostrelayPointerHooks;
  }
}

/** Publishes the hooks on window; the returned function takes them down again (if still ours). */
export function publishPointerHooks(hooks: HostrelayPointerHooks): () => void {
  window.hostrelayPointer = hooks;
  return () => {
    if (window.hostrelayPointer === hooks) delete window.hostrelayPointer;
  };
}
