import type { AdminBan, BanList, BanRequest } from './api';
import { formatAge } from './traffic';
import { el, node } from './view';

// The admin page's bans card: the form that adds a server-wide ban and the
// list of bans in force, each with Lift. User ids and reasons come from
// the operator but go in as text all the same.

export const banUi = {
  form: el('ban-form', HTMLFormElement),
  kind: el('ban-kind', HTMLSelectElement),
  target: el('ban-target', HTMLInputElement),
  duration: el('ban-duration', HTMLSelectElement),
  reason: el('ban-reason', HTMLInputElement),
  button: el('ban-button', HTMLButtonElement),
  error: el('ban-error', HTMLParagraphElement),
  list: el('bans', HTMLUListElement),
  empty: el('bans-empty', HTMLParagraphElement),
  count: el('bans-count', HTMLSpanElement),
};

/** The form as a request, or what to fix in it. */
export function banRequestOf(kind: string, target: string, duration: string, reason: string): BanRequest | string {
  const t = target.trim();
  if (t === '') return kind === 'ip' ? 'Enter an IP address or prefix, e.g. 203.0.113.7 or 203.0.113.0/24.' : 'Enter the user id (the token’s sub).';
  return kind === 'ip' ? { ip: t, duration, reason: reason.trim() } : { user: t, duration, reason: reason.trim() };
}

function banItem(b: AdminBan): HTMLLIElement {
  const li = node('li', 'ban');
  li.dataset['ban'] = b.id;
  const what = node('span', 'who');
  what.append(node('span', 'badge', b.user !== undefined ? 'user' : 'network'), node('code', 'target', b.user ?? b.ip ?? b.id));
  const reason = node('span', 'reason', b.reason ?? '');
  if (!b.reason) reason.classList.add('none');
  const left = node('span', 'left', `${formatAge(Math.max(0, b.remainingSeconds))} left`);
  left.title = `Until ${new Date(b.expiresAt).toLocaleString()}`;
  const lift = node('button', 'secondary small', 'Lift');
  lift.type = 'button';
  lift.dataset['lift'] = b.id;
  lift.setAttribute('aria-label', `lift the ban of ${b.user ?? b.ip ?? b.id}`);
  li.append(what, reason, left, lift);
  return li;
}

/** Brings the bans card in line with a poll. */
export function renderBans(list: BanList): void {
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset['lift'] : undefined;
  banUi.list.replaceChildren(...list.bans.map(banItem));
  banUi.empty.hidden = list.bans.length > 0;
  banUi.count.textContent = `${list.bans.length} of at most ${list.max}`;
  if (focused !== undefined) banUi.list.querySelector<HTMLElement>(`[data-lift="${CSS.escape(focused)}"]`)?.focus();
}
