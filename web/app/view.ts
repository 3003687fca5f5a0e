import { describe, retryable, titleOf } from './messages';
import type { HostrelayState, Phase } from './state';

function el<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`lobby page: #${id} is missing`);
  return found;
}

/** The page's elements, found once. */
export const ui = {
  status: el('status', HTMLParagraphElement),
  formError: el('form-error', HTMLParagraphElement),
  views: {
    lobby: el('view-lobby', HTMLElement),
    name: el('view-name', HTMLElement),
    room: el('view-room', HTMLElement),
    error: el('view-error', HTMLElement),
  } satisfies Record<Phase, HTMLElement>,
  createForm: el('create-form', HTMLFormElement),
  createName: el('create-name', HTMLInputElement),
  roomName: el('room-name', HTMLInputElement),
  maxPlayers: el('max-players', HTMLInputElement),
  roomPublic: el('room-public', HTMLInputElement),
  roomPassword: el('room-password', HTMLInputElement),
  createButton: el('create-button', HTMLButtonElement),
  codeForm: el('code-form', HTMLFormElement),
  roomCode: el('room-code', HTMLInputElement),
  joinForm: el('join-form', HTMLFormElement),
  joinCode: el('join-code', HTMLSpanElement),
  joinName: el('join-name', HTMLInputElement),
  joinPasswordField: el('join-password-field', HTMLDivElement),
  joinPassword: el('join-password', HTMLInputElement),
  joinButton: el('join-button', HTMLButtonElement),
  roomNameOut: el('room-name-out', HTMLSpanElement),
  roleOut: el('role-out', HTMLElement),
  roomCodeOut: el('room-code-out', HTMLSpanElement),
  shareLink: el('share-link', HTMLInputElement),
  copyButton: el('copy-button', HTMLButtonElement),
  players: el('players', HTMLUListElement),
  playerCount: el('player-count', HTMLSpanElement),
  leaveButton: el('leave-button', HTMLButtonElement),
  demoHelp: el('demo-help', HTMLParagraphElement),
  canvas: el('demo-canvas', HTMLCanvasElement),
  peerOut: el('peer-out', HTMLSpanElement),
  rttOut: el('rtt-out', HTMLSpanElement),
  errorTitle: el('error-title', HTMLHeadingElement),
  errorText: el('error-text', HTMLParagraphElement),
  retryButton: el('retry-button', HTMLButtonElement),
};

let shownPhase: Phase | null = null;
let shownPlayers = '';

/** Brings the DOM in line with the state. Names only ever go in as text. */
export function render(s: Readonly<HostrelayState>, maxPlayers: number): void {
  for (const [phase, section] of Object.entries(ui.views)) section.hidden = phase !== s.phase;
  if (shownPhase !== s.phase) {
    shownPhase = s.phase;
    // Move focus to the new view's heading or first field for keyboard and screen-reader users.
    const target = ui.views[s.phase].querySelector<HTMLElement>('input:not([type=hidden]):not([readonly]), h1');
    if (target instanceof HTMLInputElement && !target.value) target.focus();
  }

  const message = s.error ? describe(s.error.code, s.error.message) : '';
  ui.errorText.textContent = message;
  ui.errorTitle.textContent = s.error ? titleOf(s.error.code) : '';
  ui.retryButton.hidden = s.error !== null && !retryable(s.error.code);
  ui.formError.textContent = message;
  ui.formError.hidden = !message || s.phase === 'error';

  if (s.phase !== 'room') return;
  ui.roleOut.textContent = s.role === 'host' ? 'the host' : 'a player';

  const key = JSON.stringify([s.players, s.openPeers]);
  if (key !== shownPlayers) {
    shownPlayers = key;
    ui.players.replaceChildren(
      ...s.players.map((p) => {
        const li = document.createElement('li');
        li.dataset['playerId'] = p.id;
        const name = document.createElement('span');
        name.className = 'name';
        name.textContent = p.name;
        li.append(name);
        if (p.host) li.append(badge('host', 'host'));
        if (p.id === s.you) li.append(badge('you', 'you'));
        const linked = s.openPeers.includes(p.id);
        if (p.id !== s.you && (s.role === 'host' || p.host)) {
          li.append(badge(linked ? 'connected' : 'connecting…', linked ? 'linked' : 'pending'));
        }
        return li;
      }),
    );
    ui.playerCount.textContent = `${s.players.length} of ${maxPlayers}`;
  }

  if (s.role === 'host') {
    const clients = s.players.length - 1;
    ui.peerOut.textContent =
      clients === 0 ? 'Waiting for players' : `${s.openPeers.length} of ${clients} player${clients === 1 ? '' : 's'} connected`;
    ui.rttOut.textContent = `${s.packetsReceived} packets received`;
  } else {
    ui.peerOut.textContent = s.openPeers.length > 0 ? 'Connected to the host' : 'Connecting to the host…';
    ui.rttOut.textContent = s.rttMs === null ? 'RTT –' : `RTT ${s.rttMs.toFixed(2)} ms (median)`;
  }
}

function badge(text: string, kind: string): HTMLSpanElement {
  const b = document.createElement('span');
  b.className = `badge ${kind}`;
  b.textContent = text;
  return b;
}

export function setStatus(text: string): void {
  ui.status.textContent = text;
}
