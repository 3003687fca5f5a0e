import { ui } from './dom';
import { renderLobby } from './lobby-view';
import { describe, retryable, titleOf } from './messages';
import { renderRoom } from './room-view';
import type { HostrelayState, Phase } from './state';

let shownPhase: Phase | null = null;

function title(s: Readonly<HostrelayState>): string {
  switch (s.phase) {
    case 'room':
      return s.room ? `${s.started ? '▶ ' : ''}${s.room.name} (${s.room.code}) · hostrelay` : 'hostrelay';
    case 'name':
      return `Join ${s.joinCode ?? 'a room'} · hostrelay`;
    case 'error':
      return `${s.error ? titleOf(s.error.code) : 'Error'} · hostrelay`;
    case 'watch':
      return `Watching ${s.watching?.name ?? s.watching?.code ?? ''} · hostrelay`;
    default:
      return 'Rooms · hostrelay';
  }
}

function renderConnection(s: Readonly<HostrelayState>): void {
  ui.conn.dataset['status'] = s.connection;
  ui.conn.textContent = { online: 'Online', connecting: 'Connecting…', reconnecting: 'Reconnecting…', refused: 'Not connected' }[s.connection];
  ui.nodeRegion.textContent = s.node.region;
  ui.nodeRegion.hidden = s.node.region === '';
  const down = s.connection === 'reconnecting';
  ui.banner.hidden = !down || s.phase === 'error';
  if (down) {
    ui.bannerText.textContent =
      s.retryInMs === null
        ? 'Connection to the server lost. Reconnecting…'
        : `Can’t reach the server. Retrying in ${Math.max(1, Math.round(s.retryInMs / 1000))} s…`;
  }
}

function focusView(phase: Phase, first: boolean): void {
  const view = ui.views[phase];
  const field = phase === 'room' ? null : view.querySelector<HTMLInputElement>('input:not([type=hidden]):not([readonly]):not([type=search])');
  if (field && !field.value) field.focus();
  else if (phase === 'name') ui.joinButton.focus(); // name remembered: Enter joins
  else if (!first) {
    const h1 = view.querySelector<HTMLElement>('h1');
    h1?.setAttribute('tabindex', '-1');
    h1?.focus({ preventScroll: true });
  }
}

/** Brings the DOM in line with the state. Names and chat only ever go in as text. */
export function render(s: Readonly<HostrelayState>): void {
  for (const [phase, section] of Object.entries(ui.views)) section.hidden = phase !== s.phase;
  if (shownPhase !== s.phase) {
    const first = shownPhase === null;
    shownPhase = s.phase;
    // Move focus into the new view for keyboard and screen-reader users; on
    // first load an empty name field takes it, so typing a name just works.
    // The room view never grabs a text field: on a phone that opens the keyboard over the room.
    // At the next frame: focus() lays the page out to see what can take
    // it, and done here that layout would come on top of the frame's own,
    // on the main thread a join's connection is waiting for.
    const phase = s.phase;
    requestAnimationFrame(() => {
      if (shownPhase === phase) focusView(phase, first);
    });
  }
  document.title = title(s);
  renderConnection(s);

  if (s.phase === 'error' && s.error) {
    ui.errorTitle.textContent = titleOf(s.error.code);
    ui.errorText.textContent = describe(s.error.code, s.error.message);
    ui.retryButton.hidden = !retryable(s.error.code);
  }
  if (s.phase === 'lobby') renderLobby(s);
  if (s.phase === 'room') renderRoom(s);
}
