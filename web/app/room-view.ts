import { badge, span, ui } from './dom';
import type { HostrelayState, PlayerView } from './state';

let shownPlayers = '';
let armedKick: string | null = null;

/**
 * Marks the button that asks "Sure?" (a kick takes two presses): a player id
 * for Kick, "ban:" and the id for Ban.
 */
export function armKick(playerId: string | null): void {
  armedKick = playerId;
  shownPlayers = '';
}

export function kickArmed(): string | null {
  return armedKick;
}
let shownChat: HostrelayState['chat'] | null = null;

/** Players who are not the host and not ready. */
export function notReady(s: Readonly<HostrelayState>): PlayerView[] {
  return s.players.filter((p) => !p.host && !p.ready);
}

function playerItem(s: Readonly<HostrelayState>, p: PlayerView): HTMLLIElement {
  const li = document.createElement('li');
  li.dataset['playerId'] = p.id;
  const who = document.createElement('span');
  who.className = 'who';
  who.append(span('name', p.name));
  if (p.verified) {
    const mark = span('verified', '✓');
    mark.title = 'Verified by the game';
    mark.setAttribute('aria-label', 'verified');
    mark.dataset['userId'] = p.userId;
    who.append(mark);
  }
  if (p.host) who.append(badge('host', 'host'));
  if (p.id === s.you) who.append(badge('you', 'you'));
  if (!p.host) who.append(p.ready ? badge('ready', 'ready') : badge('not ready', 'waiting'));
  if (p.away) who.append(badge('away', 'away'));
  const linked = s.openPeers.includes(p.id);
  if (p.id !== s.you && (s.role === 'host' || p.host)) {
    who.append(badge(linked ? 'connected' : 'connecting…', linked ? 'linked' : 'pending'));
  }
  const ping = span('ping', p.ping > 0 ? `${p.ping} ms` : '– ms');
  ping.title = 'Round trip to the server';
  ping.setAttribute('aria-label', p.ping > 0 ? `ping ${p.ping} milliseconds` : 'ping not measured yet');
  li.append(who, ping);
  if (s.role === 'host' && p.id !== s.you) {
    const actions = span('actions', '');
    actions.append(kickButton(p.id, 'Kick', `kick ${p.name}`));
    // A ban is the user id's: any session, name or device of that user
    // stays out. Unverified players have none; Kick already bans the rest.
    if (p.verified) actions.append(kickButton(`ban:${p.id}`, 'Ban', `kick ${p.name} and ban their account from this room`));
    li.append(actions);
  }
  return li;
}

function kickButton(key: string, label: string, what: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  const armed = armedKick === key;
  b.className = `danger small kick${armed ? ' armed' : ''}`;
  b.dataset['kick'] = key;
  b.textContent = armed ? 'Sure?' : label;
  b.setAttribute('aria-label', armed ? `Press again to ${what}` : what.charAt(0).toUpperCase() + what.slice(1));
  return b;
}

function timeOf(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function renderChat(s: Readonly<HostrelayState>): void {
  if (s.chat === shownChat) return;
  const log = ui.chatLog;
  shownChat = s.chat;
  if (s.chat.length === 0) {
    const li = document.createElement('li');
    li.className = 'empty-chat';
    li.textContent = 'No messages yet. Say hi!';
    log.replaceChildren(li);
    return;
  }
  // Measured only with lines to keep in view: reading the layout forces it
  // now, and on entering a room (no lines yet) that would be before the
  // first packets (15 ms a join, profiled).
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 24;
  // Text only: a line like <img onerror=…> shows as those characters.
  log.replaceChildren(
    ...s.chat.map((m) => {
      const li = document.createElement('li');
      li.append(span('who', m.name), span('text', m.text), span('when', timeOf(m.at)));
      return li;
    }),
  );
  if (atBottom) log.scrollTop = log.scrollHeight;
}

function renderReady(s: Readonly<HostrelayState>): void {
  const me = s.players.find((p) => p.id === s.you);
  const waiting = notReady(s);
  const others = s.players.length - 1;
  ui.readyButton.hidden = s.role !== 'client';
  ui.startButton.hidden = s.role !== 'host';
  if (s.role === 'client') {
    const ready = me?.ready === true;
    ui.readyButton.setAttribute('aria-pressed', String(ready));
    ui.readyButton.textContent = ready ? 'Ready ✓' : 'I’m ready';
    ui.readyHint.textContent = ready
      ? 'Waiting for the host to start the game.'
      : 'Press “I’m ready” when you are set; the host starts once everyone is.';
  } else {
    ui.startButton.disabled = others === 0 || waiting.length > 0;
    ui.readyHint.textContent =
      others === 0
        ? 'Waiting for players to join. Share the link or the code.'
        : waiting.length > 0
          ? `Waiting for ${waiting.map((p) => p.name).join(', ')} to get ready.`
          : 'Everyone is ready. Start when you like.';
  }
}

/** Brings the room view in line with the state. */
export function renderRoom(s: Readonly<HostrelayState>): void {
  const room = s.room;
  if (!room) return;
  ui.roomNameOut.textContent = room.name;
  ui.roomLock.hidden = !room.hasPassword;
  ui.roleOut.textContent = s.role === 'host' ? 'the host' : 'a player';
  ui.roomModeOut.textContent = room.mode ? ` · ${room.mode}` : '';
  ui.roomCodeOut.textContent = room.code;
  ui.roomNotice.hidden = s.notice === null;
  ui.roomNotice.textContent = s.notice ?? '';
  ui.shareCard.hidden = s.started;
  ui.readyCard.hidden = s.started;
  ui.gameCard.hidden = !s.started;

  const key = JSON.stringify([s.players, s.openPeers, s.role]);
  if (key !== shownPlayers) {
    shownPlayers = key;
    // Keep focus on a kick button across a rebuild.
    const focusedKick = document.activeElement instanceof HTMLElement ? document.activeElement.dataset['kick'] : undefined;
    ui.players.replaceChildren(...s.players.map((p) => playerItem(s, p)));
    if (focusedKick) ui.players.querySelector<HTMLButtonElement>(`button[data-kick="${focusedKick}"]`)?.focus();
    ui.playerCount.textContent = `${s.players.length} of ${room.maxPlayers}`;
  }
  renderReady(s);
  renderChat(s);

  if (s.role === 'host') {
    const clients = s.players.length - 1;
    ui.peerOut.textContent =
      clients === 0 ? 'No players yet' : `${s.openPeers.length} of ${clients} connected to you`;
    ui.rttOut.textContent =
      s.packetsReceived === 0 ? '' : `${s.packetsReceived} packet${s.packetsReceived === 1 ? '' : 's'} received`;
  } else {
    ui.peerOut.textContent = s.openPeers.length > 0 ? 'Connected to the host' : 'Connecting to the host…';
    ui.rttOut.textContent = s.rttMs === null ? '' : `RTT ${s.rttMs.toFixed(1)} ms to the host`;
  }
  // Games other than the pointer demo report nothing here: no empty stats line.
  if (ui.rttOut.parentElement) ui.rttOut.parentElement.hidden = ui.rttOut.textContent === '';
}
