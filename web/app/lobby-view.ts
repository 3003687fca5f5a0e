import type { RoomSummary } from '@hostrelay/sdk';
import { lockIcon, span, ui } from './dom';
import { filterRooms } from './room-filter';
import type { HostrelayState } from './state';
import { WatchController } from './watch';

let shown: { rooms: readonly RoomSummary[]; filter: string; loaded: boolean; connection: string } | null = null;

function roomLabel(r: RoomSummary): string {
  const parts = [`${r.name}, hosted by ${r.host}`, `${r.players} of ${r.maxPlayers} players`];
  if (r.mode) parts.push(r.mode);
  if (r.region) parts.push(`in ${r.region}`);
  if (r.hasPassword) parts.push('needs a password');
  if (r.started) parts.push('game in progress');
  if (r.players >= r.maxPlayers) parts.push('full');
  return parts.join(', ');
}

function roomItem(r: RoomSummary): HTMLLIElement {
  const li = document.createElement('li');
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'room-item';
  b.dataset['code'] = r.code;
  b.dataset['password'] = r.hasPassword ? '1' : '';
  b.setAttribute('aria-label', `Join ${roomLabel(r)}`);
  const full = r.players >= r.maxPlayers;
  b.disabled = full;
  const name = span('rname', r.name);
  if (r.hasPassword) name.append(lockIcon('password'));
  const meta = span('rmeta', [`hosted by ${r.host}`, r.mode].filter(Boolean).join(' · '));
  // In a cluster: the region of the server the room is on (it decides the game's latency).
  if (r.region) meta.prepend(span('rregion', r.region));
  const count = span('rcount', `${r.players}/${r.maxPlayers}`);
  const state = span('rstate', full ? 'full' : r.started ? 'in game' : 'open');
  b.append(name, count, meta, state);
  li.append(b);
  // A game in progress or a full room: no seat to take, but a seat to watch
  // from (a password room would ask for its password: not offered here).
  if ((r.started || full) && !r.hasPassword && WatchController.canWatch(r.mode)) {
    const w = document.createElement('button');
    w.type = 'button';
    w.className = 'secondary small';
    w.dataset['watch'] = r.code;
    w.textContent = 'Watch';
    w.setAttribute('aria-label', `Watch ${r.name}`);
    li.classList.add('watchable');
    li.append(w);
  }
  return li;
}

/** Brings the room list in line with the state; rebuilt only when rooms or the filter change. */
export function renderLobby(s: Readonly<HostrelayState>): void {
  const filter = ui.roomFilter.value;
  const next = { rooms: s.rooms, filter, loaded: s.roomsLoaded, connection: s.connection };
  if (shown && shown.rooms === next.rooms && shown.filter === filter && shown.loaded === next.loaded && shown.connection === next.connection) {
    return;
  }
  shown = next;
  // Keep keyboard focus on the same room across a rebuild.
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset['code'] : undefined;
  const visible = filterRooms(s.rooms, filter);
  ui.roomList.replaceChildren(...visible.map(roomItem));
  if (focused) ui.roomList.querySelector<HTMLButtonElement>(`button[data-code="${focused}"]`)?.focus();

  ui.roomCount.textContent = s.roomsLoaded ? `${s.rooms.length} open` : '';
  ui.roomsEmpty.hidden = visible.length > 0;
  ui.roomsEmpty.textContent = !s.roomsLoaded
    ? s.connection === 'online'
      ? 'Loading rooms…'
      : 'Waiting for the server…'
    : s.rooms.length === 0
      ? 'No public rooms right now. Host one and your friends will see it here.'
      : `No room matches “${filter.trim()}”.`;
}
