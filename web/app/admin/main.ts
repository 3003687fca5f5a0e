import { AdminApi, describeFailure, type ApiFailure, type BanList, type Overview } from './api';
import { banRequestOf, banUi, renderBans } from './bans';
import { ratesBetween, sampleOf, type Rates, type Sample } from './traffic';
import { renderLive, ui, type Armed } from './view';

// The admin page: sign in with the server's admin token, then poll the
// overview every few seconds. The token lives in this tab's sessionStorage
// only: it survives a reload, not the tab, and never reaches a URL, a
// cookie or localStorage.

const TOKEN_KEY = 'hostrelay.admin.token';
/** How often the overview is polled; a poll starts only after the last one ended. */
const POLL_MS = 2_000;
/** How long the first press of Kick or Close room waits for the second. */
const ARM_MS = 4_000;

const NO_RATES: Rates = { total: null, byRoom: new Map(), byPlayer: new Map() };

let api: AdminApi | null = null;
let timer: number | undefined;
/** A poll is running; pollAgain asks for another as soon as it ends. */
let polling = false;
let pollAgain = false;
let last: Overview | null = null;
let lastBans: BanList | null = null;
let lastSample: Sample | null = null;
let rates = NO_RATES;
const armed: Armed = { action: null };
let disarm: number | undefined;

function setPhase(phase: 'signin' | 'live'): void {
  document.body.dataset['phase'] = phase;
  ui.signIn.hidden = phase !== 'signin';
  ui.live.hidden = phase !== 'live';
  ui.signOut.hidden = phase !== 'live';
  document.title = phase === 'live' ? 'Admin · hostrelay' : 'Admin sign-in · hostrelay';
}

function setConn(status: 'online' | 'reconnecting' | 'connecting', text: string): void {
  ui.conn.dataset['status'] = status;
  ui.conn.textContent = text;
}

/** Back to the sign-in form; the saved token goes unless keepToken (the server was only unreachable). */
function showSignIn(error: string | null, keepToken = false): void {
  window.clearTimeout(timer);
  api = null;
  last = null;
  lastBans = null;
  lastSample = null;
  rates = NO_RATES;
  if (!keepToken) sessionStorage.removeItem(TOKEN_KEY);
  setPhase('signin');
  setConn('connecting', 'Signed out');
  ui.signInError.hidden = error === null;
  ui.signInError.textContent = error ?? '';
  ui.token.setAttribute('aria-invalid', error === null ? 'false' : 'true');
  ui.signInButton.disabled = false;
  ui.token.focus();
}

/** A refusal that means this token will not work: back to sign-in. */
function refusesToken(e: ApiFailure): boolean {
  return e.status === 401 || e.status === 404 || e.status === 429;
}

function draw(): void {
  if (last) renderLive(last, rates, armed);
  if (lastBans) renderBans(lastBans);
}

/** Takes in a successful poll. A restarted server numbers its allocations afresh: no rate across that. */
function accept(o: Overview): void {
  if (last && last.server.startedAt !== o.server.startedAt) lastSample = null;
  rates = ratesBetween(lastSample, o);
  lastSample = sampleOf(o);
  last = o;
  setConn('online', 'Live');
  ui.pollStatus.textContent = `Updated ${new Date().toLocaleTimeString()} · every ${POLL_MS / 1000} s`;
  draw();
}

/** Polls now (or right after the poll in flight), then every POLL_MS. */
async function poll(): Promise<void> {
  window.clearTimeout(timer);
  if (polling) {
    pollAgain = true;
    return;
  }
  const current = api;
  if (!current) return;
  polling = true;
  const [r, b] = await Promise.all([current.overview(), current.bans()]);
  polling = false;
  if (api !== current) return; // signed out meanwhile
  if (b.ok) lastBans = b.value;
  if (r.ok) accept(r.value);
  else if (refusesToken(r.error)) {
    showSignIn(r.error.status === 401 ? 'The server no longer accepts this token. Sign in again.' : describeFailure(r.error));
    return;
  } else {
    setConn('reconnecting', 'Reconnecting…');
    ui.pollStatus.textContent = `${describeFailure(r.error)} Showing the last figures.`;
  }
  if (pollAgain) {
    pollAgain = false;
    void poll();
    return;
  }
  timer = window.setTimeout(() => void poll(), POLL_MS);
}

async function signIn(token: string, saved = false): Promise<void> {
  if (token === '') {
    showSignIn('Enter the admin token.');
    return;
  }
  ui.signInButton.disabled = true;
  ui.signInError.hidden = true;
  const candidate = new AdminApi(token);
  const r = await candidate.overview();
  ui.signInButton.disabled = false;
  if (!r.ok) {
    showSignIn(describeFailure(r.error), saved && !refusesToken(r.error));
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  ui.token.value = '';
  api = candidate;
  setPhase('live');
  const b = await candidate.bans();
  if (b.ok) lastBans = b.value;
  accept(r.value);
  ui.main.focus({ preventScroll: true });
  timer = window.setTimeout(() => void poll(), POLL_MS);
}

/** Runs a Kick or Close room on its second press. */
async function act(action: string): Promise<void> {
  if (!api) return;
  if (armed.action !== action) {
    armed.action = action;
    window.clearTimeout(disarm);
    disarm = window.setTimeout(() => {
      armed.action = null;
      draw();
    }, ARM_MS);
    draw();
    return;
  }
  armed.action = null;
  window.clearTimeout(disarm);
  const [verb, target = ''] = action.split(':', 2) as [string, string?];
  const [code = '', player] = target.split('/', 2);
  const r = verb === 'kick' && player !== undefined ? await api.kick(code, player) : await api.closeRoom(code);
  if (!r.ok && refusesToken(r.error)) {
    showSignIn(describeFailure(r.error));
    return;
  }
  ui.actionError.hidden = r.ok;
  ui.actionError.textContent = r.ok ? '' : describeFailure(r.error);
  await poll(); // show the result now rather than at the next tick
}

ui.form.addEventListener('submit', (e) => {
  e.preventDefault();
  void signIn(ui.token.value.trim());
});
ui.signOut.addEventListener('click', () => showSignIn(null));
ui.rooms.addEventListener('click', (e) => {
  const button = (e.target as Element).closest<HTMLButtonElement>('button[data-action]');
  if (button?.dataset['action']) void act(button.dataset['action']);
});

/** Adds the ban the form describes; the list shows it at once. */
async function addBan(): Promise<void> {
  if (!api) return;
  const req = banRequestOf(banUi.kind.value, banUi.target.value, banUi.duration.value, banUi.reason.value);
  if (typeof req === 'string') {
    showBanError(req);
    return;
  }
  banUi.button.disabled = true;
  const r = await api.ban(req);
  banUi.button.disabled = false;
  if (!r.ok && refusesToken(r.error)) {
    showSignIn(describeFailure(r.error));
    return;
  }
  if (!r.ok) {
    showBanError(describeFailure(r.error));
    return;
  }
  showBanError(null);
  banUi.target.value = '';
  banUi.reason.value = '';
  const ended = r.value.sessionsEnded;
  ui.pollStatus.textContent = ended > 0 ? `Banned; ${ended} ${ended === 1 ? 'session' : 'sessions'} ended.` : 'Banned.';
  await poll();
}

function showBanError(message: string | null): void {
  banUi.error.hidden = message === null;
  banUi.error.textContent = message ?? '';
  banUi.target.setAttribute('aria-invalid', message === null ? 'false' : 'true');
  if (message !== null) banUi.target.focus();
}

async function lift(id: string): Promise<void> {
  if (!api) return;
  const r = await api.lift(id);
  if (!r.ok && refusesToken(r.error)) {
    showSignIn(describeFailure(r.error));
    return;
  }
  ui.actionError.hidden = r.ok;
  ui.actionError.textContent = r.ok ? '' : describeFailure(r.error);
  await poll();
}

banUi.form.addEventListener('submit', (e) => {
  e.preventDefault();
  void addBan();
});
banUi.kind.addEventListener('change', () => {
  banUi.target.placeholder = banUi.kind.value === 'ip' ? '203.0.113.7 · 203.0.113.0/24 · 2001:db8::/48' : 'user-42 (the token’s sub)';
});
banUi.list.addEventListener('click', (e) => {
  const button = (e.target as Element).closest<HTMLButtonElement>('button[data-lift]');
  if (button?.dataset['lift']) void lift(button.dataset['lift']);
});

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) void signIn(saved, true);
else showSignIn(null);
