// The page's elements, found once. A missing element is a bug in index.html,
// so it fails loudly at startup rather than later in a handler.

function el<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`lobby page: #${id} is missing`);
  return found;
}

export const ui = {
  main: el('app', HTMLElement),
  conn: el('conn', HTMLSpanElement),
  nodeRegion: el('node-region', HTMLSpanElement),
  banner: el('banner', HTMLDivElement),
  bannerText: el('banner-text', HTMLSpanElement),
  bannerRetry: el('banner-retry', HTMLButtonElement),
  views: {
    lobby: el('view-lobby', HTMLElement),
    name: el('view-name', HTMLElement),
    room: el('view-room', HTMLElement),
    error: el('view-error', HTMLElement),
    watch: el('view-watch', HTMLElement),
  },

  // lobby: name
  nameForm: el('name-form', HTMLFormElement),
  name: el('create-name', HTMLInputElement),
  nameError: el('name-error', HTMLParagraphElement),
  // lobby: browser
  roomFilter: el('room-filter', HTMLInputElement),
  roomList: el('room-list', HTMLUListElement),
  roomsEmpty: el('rooms-empty', HTMLParagraphElement),
  roomCount: el('room-count', HTMLSpanElement),
  // lobby: play now and party
  quickForm: el('quick-form', HTMLFormElement),
  quickMode: el('quick-mode', HTMLSelectElement),
  quickButton: el('quick-button', HTMLButtonElement),
  quickHint: el('quick-hint', HTMLParagraphElement),
  quickError: el('quick-error', HTMLParagraphElement),
  partyCreate: el('party-create', HTMLButtonElement),
  partyJoin: el('party-join', HTMLButtonElement),
  partyLive: el('party-live', HTMLDivElement),
  partyCode: el('party-code', HTMLSpanElement),
  partyLink: el('party-link', HTMLInputElement),
  partyLeave: el('party-leave', HTMLButtonElement),
  partyMembers: el('party-members', HTMLUListElement),
  partyError: el('party-error', HTMLParagraphElement),
  // lobby: create
  createForm: el('create-form', HTMLFormElement),
  roomName: el('room-name', HTMLInputElement),
  roomNameError: el('room-name-error', HTMLParagraphElement),
  maxPlayers: el('max-players', HTMLInputElement),
  maxPlayersError: el('max-players-error', HTMLParagraphElement),
  roomMode: el('room-mode', HTMLSelectElement),
  roomPublic: el('room-public', HTMLInputElement),
  roomMigrate: el('room-migrate', HTMLInputElement),
  roomPassword: el('room-password', HTMLInputElement),
  roomPasswordError: el('room-password-error', HTMLParagraphElement),
  createButton: el('create-button', HTMLButtonElement),
  createRegion: el('create-region', HTMLParagraphElement),
  createError: el('create-error', HTMLParagraphElement),
  // lobby: code
  codeForm: el('code-form', HTMLFormElement),
  roomCode: el('room-code', HTMLInputElement),
  codeButton: el('code-button', HTMLButtonElement),
  codeError: el('code-error', HTMLParagraphElement),

  // join page
  joinCode: el('join-code', HTMLSpanElement),
  joinInfo: el('join-info', HTMLParagraphElement),
  joinForm: el('join-form', HTMLFormElement),
  joinName: el('join-name', HTMLInputElement),
  joinNameError: el('join-name-error', HTMLParagraphElement),
  joinPasswordField: el('join-password-field', HTMLDivElement),
  joinPassword: el('join-password', HTMLInputElement),
  joinButton: el('join-button', HTMLButtonElement),
  joinError: el('join-error', HTMLParagraphElement),

  // watch
  watchRoom: el('watch-room', HTMLSpanElement),
  watchStatus: el('watch-status', HTMLParagraphElement),
  watchGame: el('watch-game', HTMLDivElement),

  // room
  roomNameOut: el('room-name-out', HTMLSpanElement),
  roomNotice: el('room-notice', HTMLParagraphElement),
  roomLock: el('room-lock', HTMLSpanElement),
  roleOut: el('role-out', HTMLElement),
  roomModeOut: el('room-mode-out', HTMLSpanElement),
  roomCodeOut: el('room-code-out', HTMLSpanElement),
  shareCard: el('share-card', HTMLDivElement),
  shareLink: el('share-link', HTMLInputElement),
  copyButton: el('copy-button', HTMLButtonElement),
  copyStatus: el('copy-status', HTMLParagraphElement),
  shareQr: el('share-qr', HTMLImageElement),
  readyCard: el('ready-card', HTMLDivElement),
  readyHint: el('ready-hint', HTMLParagraphElement),
  readyButton: el('ready-button', HTMLButtonElement),
  startButton: el('start-button', HTMLButtonElement),
  readyError: el('ready-error', HTMLParagraphElement),
  gameCard: el('game-card', HTMLDivElement),
  game: el('game', HTMLDivElement),
  rttOut: el('rtt-out', HTMLSpanElement),
  players: el('players', HTMLUListElement),
  playerCount: el('player-count', HTMLSpanElement),
  peerOut: el('peer-out', HTMLSpanElement),
  leaveButton: el('leave-button', HTMLButtonElement),
  chatLog: el('chat-log', HTMLOListElement),
  chatForm: el('chat-form', HTMLFormElement),
  chatInput: el('chat-input', HTMLInputElement),
  chatError: el('chat-error', HTMLParagraphElement),

  // error
  errorTitle: el('error-title', HTMLHeadingElement),
  errorText: el('error-text', HTMLParagraphElement),
  retryButton: el('retry-button', HTMLButtonElement),
};

/** Shows a message under a field (or hides it with null) and marks the field for assistive tech. */
export function fieldError(p: HTMLParagraphElement, message: string | null, input?: HTMLInputElement): void {
  p.textContent = message ?? '';
  p.hidden = message === null;
  if (input) input.setAttribute('aria-invalid', message === null ? 'false' : 'true');
}

export function badge(text: string, kind: string): HTMLSpanElement {
  const b = document.createElement('span');
  b.className = `badge ${kind}`;
  b.textContent = text;
  return b;
}

/** A span with text content: names and chat only ever enter the page this way, never as HTML. */
export function span(className: string, text: string): HTMLSpanElement {
  const s = document.createElement('span');
  s.className = className;
  s.textContent = text;
  return s;
}

const SVG = 'http://www.w3.org/2000/svg';

/** A padlock drawn in SVG (emoji fonts are not everywhere); `label` names it for screen readers. */
export function lockIcon(label: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  svg.setAttribute('class', 'lock');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  const body = document.createElementNS(SVG, 'rect');
  for (const [k, v] of Object.entries({ x: '2.5', y: '7', width: '11', height: '8', rx: '1.5', fill: 'currentColor' })) {
    body.setAttribute(k, v);
  }
  const shackle = document.createElementNS(SVG, 'path');
  shackle.setAttribute('d', 'M5 7V5a3 3 0 0 1 6 0v2');
  shackle.setAttribute('fill', 'none');
  shackle.setAttribute('stroke', 'currentColor');
  shackle.setAttribute('stroke-width', '1.8');
  svg.append(body, shackle);
  return svg;
}
