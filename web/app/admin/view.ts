import type { AdminPlayer, AdminRoom, Overview } from './api';
import { formatAge, formatBytes, formatRate, type Rates } from './traffic';

// The admin page's DOM. Names come from players and hosts: they only ever
// go in as text.

/** The page's element #id, of type. */
export function el<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`admin page: #${id} is missing`);
  return found;
}

export const ui = {
  main: el('app', HTMLElement),
  conn: el('conn', HTMLSpanElement),
  signOut: el('signout-button', HTMLButtonElement),
  signIn: el('view-signin', HTMLElement),
  live: el('view-live', HTMLElement),
  form: el('signin-form', HTMLFormElement),
  token: el('token', HTMLInputElement),
  signInButton: el('signin-button', HTMLButtonElement),
  signInError: el('signin-error', HTMLParagraphElement),
  figures: el('figures', HTMLUListElement),
  rooms: el('rooms', HTMLUListElement),
  roomsEmpty: el('rooms-empty', HTMLParagraphElement),
  roomsCount: el('rooms-count', HTMLSpanElement),
  actionError: el('action-error', HTMLParagraphElement),
  pollStatus: el('poll-status', HTMLParagraphElement),
};

/** A new element with a class and, if given, its text. */
export function node<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function badge(text: string, kind: string): HTMLSpanElement {
  return node('span', `badge ${kind}`, text);
}

/** A destructive button that takes two presses: the first arms it for a few seconds. */
export interface Armed {
  /** data-action of the armed button, e.g. "kick:ABC2345/p2" or "close:ABC2345". */
  action: string | null;
}

function actionButton(action: string, armed: Armed, label: string, sure: string, aria: string): HTMLButtonElement {
  const b = node('button', `danger small${armed.action === action ? ' armed' : ''}`);
  b.type = 'button';
  b.dataset['action'] = action;
  const isArmed = armed.action === action;
  b.textContent = isArmed ? sure : label;
  b.setAttribute('aria-label', isArmed ? `Press again: ${aria}` : aria);
  return b;
}

function figure(key: string, label: string, value: string, sub = ''): HTMLLIElement {
  const li = node('li', 'figure');
  li.dataset['figure'] = key;
  li.append(node('span', 'label', label), node('span', 'value', value));
  if (sub) li.append(node('span', 'sub', sub));
  return li;
}

/** A start time in a few characters: the time today, the date before that. */
function since(at: Date): string {
  return at.toDateString() === new Date().toDateString()
    ? at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : at.toLocaleDateString([], { dateStyle: 'medium' });
}

/** TURN's TCP and TLS connections, the latter only where TLS is on. */
function streams(conns: Record<string, number>): string {
  const tcp = conns['turnTCP'] ?? 0;
  const tls = conns['turnTLS'] ?? 0;
  return tls > 0 ? `${tcp} TCP, ${tls} TLS connections` : `${tcp} TCP connections`;
}

function renderFigures(o: Overview, rates: Rates): void {
  const s = o.server;
  const dropped = s.turn.dropped.policy + s.turn.dropped.overflow + s.turn.dropped.bandwidth;
  ui.figures.replaceChildren(
    figure('sessions', 'Sessions', String(s.sessions), `${s.conns['webSockets'] ?? 0} WebSockets`),
    figure('rooms', 'Rooms', String(s.rooms), `${s.players} ${s.players === 1 ? 'player' : 'players'}`),
    figure('allocations', 'TURN allocations', String(s.allocations), streams(s.conns)),
    figure('relayed', 'Relayed', formatRate(rates.total), dropped > 0 ? `${dropped} packets dropped` : 'none dropped'),
    figure('uptime', 'Uptime', formatAge(s.uptimeSeconds), `since ${since(new Date(s.startedAt))}`),
    figure('version', 'Version', s.version, `protocol ${s.protocol} · ${s.goVersion}`),
  );
}

function playerItem(room: AdminRoom, p: AdminPlayer, rates: Rates, armed: Armed): HTMLLIElement {
  const li = node('li', '');
  li.dataset['player'] = p.id;
  const who = node('span', 'who');
  who.append(node('span', 'name', p.name));
  if (p.host) who.append(badge('host', 'host'));
  if (!p.host && p.ready) who.append(badge('ready', 'ready'));
  if (p.away) who.append(badge('away', 'away'));
  const ping = node('span', 'ping', p.pingMs > 0 ? `${p.pingMs} ms` : '– ms');
  ping.title = 'Round trip to the server';
  const traffic = node('span', 'traffic', p.allocations === 0 ? 'no relay' : formatRate(rates.total === null ? null : (rates.byPlayer.get(`${room.code}/${p.id}`) ?? 0)));
  traffic.title =
    p.allocations === 0
      ? 'No TURN allocation: not connected to the game yet'
      : `${p.allocations} TURN ${p.allocations === 1 ? 'allocation' : 'allocations'}, ${formatBytes(p.relayedBytes)} sent through the relay`;
  li.append(who, ping, traffic, actionButton(`kick:${room.code}/${p.id}`, armed, 'Kick', 'Sure?', `kick ${p.name} from ${room.name}`));
  return li;
}

function roomItem(room: AdminRoom, rates: Rates, armed: Armed): HTMLLIElement {
  const li = node('li', 'admin-room');
  li.dataset['room'] = room.code;
  // The name, code and badges wrap beside the button, which keeps its corner.
  const title = node('div', 'rtitle');
  title.append(node('h3', 'rname', room.name), node('span', 'code', room.code));
  if (!room.public) title.append(badge('private', 'private'));
  if (room.hasPassword) title.append(badge('password', 'password'));
  if (room.started) title.append(badge('playing', 'linked'));
  const head = node('div', 'admin-room-head');
  head.append(title, actionButton(`close:${room.code}`, armed, 'Close room', 'Close for everyone?', `close ${room.name} for everyone in it`));

  const host = room.players.find((p) => p.host);
  const meta = node('p', 'rmeta');
  const rate = rates.total === null ? null : (rates.byRoom.get(room.code) ?? 0);
  meta.append(
    node('span', 'players-count', `${room.players.length} / ${room.maxPlayers} players`),
    node('span', '', host ? `host ${host.name}` : 'no host'),
    node('span', 'age', `${formatAge(room.ageSeconds)} old`),
    node('span', 'allocs', `${room.allocations} TURN ${room.allocations === 1 ? 'allocation' : 'allocations'}`),
    node('span', 'rate', formatRate(rate)),
  );
  if (room.mode) meta.append(node('span', '', room.mode));

  const players = node('ul', 'players');
  players.append(...room.players.map((p) => playerItem(room, p, rates, armed)));
  li.append(head, meta, players);
  return li;
}

/** Brings the live view in line with a poll, keeping keyboard focus on the button it was on. */
export function renderLive(o: Overview, rates: Rates, armed: Armed): void {
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset['action'] : undefined;
  renderFigures(o, rates);
  ui.rooms.replaceChildren(...o.rooms.map((r) => roomItem(r, rates, armed)));
  ui.roomsEmpty.hidden = o.rooms.length > 0;
  ui.roomsCount.textContent = o.rooms.length === 1 ? '1 room' : `${o.rooms.length} rooms`;
  if (focused !== undefined) ui.rooms.querySelector<HTMLElement>(`[data-action="${CSS.escape(focused)}"]`)?.focus();
}
