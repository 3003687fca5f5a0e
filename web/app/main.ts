import { LobbyError, RoomDirectory, type LobbyClient, type RoomSummary } from '@hostrelay/sdk';
import { MAX_PLAYER_NAME, normalizeName, normalizeRoomCode } from '@hostrelay/protocol';
import { LobbyLink } from './connection';
import { fetchNodes, nodeBaseUrl } from './nodes';
import { RegionPicker, type RegionPick } from './region-picker';
import { stunRtt, webSocketRtt } from './rtt-probe';
import { fieldError, ui } from './dom';
import { deviceId, nameProblem, saveName, savedName, takeToken } from './identity';
import { mark, markOnce } from './marks';
import { describe } from './messages';
import { RoomController } from './room-controller';
import { PartyPanel } from './party';
import { checkRoomForm, setUpFieldLimits } from './room-form';
import { initialState, Store } from './state';
import { installTestHooks } from './test-hooks';
import { render } from './view';
import { WatchController } from './watch';
import { WarmPeer } from './warm-peer';

// The lobby page: who you are, the room browser, the create and join forms,
// and the hand-over to a RoomController once you are in a room.

mark('page-start');
const sharePath = /^\/r\/([^/]+)\/?$/.exec(location.pathname)?.[1];
// A spectator link: /?watch=CODE, or a share link with ?watch (/r/CODE?watch).
const watchParam = new URLSearchParams(location.search).get('watch');
const watchCode =
  watchParam === null ? null : watchParam === '' && sharePath !== undefined ? shareCode(sharePath) : normalizeRoomCode(watchParam);

const store = new Store(
  initialState(watchParam !== null ? 'watch' : sharePath === undefined ? 'lobby' : 'name', savedName()),
);
// The e2e build's window.hostrelayTest; a constant false elsewhere, so the
// production bundle leaves the hooks out.
const testing = import.meta.env.MODE === 'e2e' ? installTestHooks() : null;
const link = new LobbyLink(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`, savedName(), {
  device: deviceId(),
  transport: testing?.transport,
  token: takeToken(),
});
testing?.useLink(link);
// Dial first: the socket opens and says hello while the rest of this script
// and the first layout run (its listeners are attached below, before any
// of its events can come: they come as tasks after this script).
link.start();
const rooms = new RoomController(store, () => nodeBaseUrl(link.client?.url ?? '') ?? location.origin, testing?.attach);
const regions = new RegionPicker({ nodes: fetchNodes, stun: (url) => stunRtt(url), webSocket: (url) => webSocketRtt(url) });
const watcher = new WatchController(store);
let directory: RoomDirectory | null = null;
const party = new PartyPanel(
  () => link.client,
  () => commitName(ui.name, ui.nameError),
);

// Fields are filled before the first render, which focuses an empty name field only.
setUpName();
setUpCreate();
setUpJoin();
setUpQuickPlay();
store.subscribe(render);
window.addEventListener('popstate', () => location.reload());

// A share link opened with a remembered name joins as soon as the lobby
// answers, without a click (a first visit still asks for the name; a
// password is asked for when the join says it is wrong).
let joinOnConnect = false;
/** A share link that joins by itself makes its peer connection now (warm-peer.ts); the join takes it. */
let warm: WarmPeer | null = null;
if (watchParam !== null) {
  if (watchCode === null) store.update({ phase: 'error', error: { code: 'room_not_found', message: 'this link has no valid room code' } });
} else if (sharePath !== undefined) {
  const code = shareCode(sharePath);
  if (code === null) store.update({ phase: 'error', error: { code: 'room_not_found', message: 'this link has no valid room code' } });
  else {
    showJoin(code, false);
    joinOnConnect = nameProblem(store.state.name) === null;
    if (joinOnConnect) warm = new WarmPeer();
  }
}

link.on('status', (connection, retryInMs) => store.update({ connection, retryInMs }));
link.on('refused', (code, message) => store.update({ phase: 'error', error: { code, message } }));
link.on('connected', (client) => {
  markOnce('lobby-welcome');
  const showNode = (): void => store.update({ node: { id: client.node, region: client.region } });
  showNode();
  // A room on another node of the cluster: the SDK moved the session there,
  // a new session that left any party behind.
  client.on('moved', () => {
    showNode();
    party.onMoved();
  });
  if (store.state.phase === 'lobby') void watchRooms(client);
  // A new session (the old one could not be resumed) watches again.
  const watching = watcher.watching ?? (store.state.phase === 'watch' ? watchCode : null);
  if (watching !== null) void watcher.watch(client, watching);
  party.onConnected(client, nameProblem(store.state.name) === null);
  // Synchronously, so the room session hears the room's events that follow.
  client.on('roomJoined', (joined) => {
    stopWatching();
    watcher.stop(); // the server stopped our watch when it seated us
    rooms.placed(client, joined);
  });
  rooms.onReconnected(client);
  if (joinOnConnect) {
    joinOnConnect = false;
    if (store.state.phase === 'name') void joinRoom();
  }
});
ui.bannerRetry.addEventListener('click', () => link.retryNow());

/**
 * The room code in a share link's path segment, or null. Anyone can type a
 * link: a malformed escape (/r/%C0%80) makes decodeURIComponent throw, and
 * thrown here it would stop the page half-started.
 */
function shareCode(segment: string): string | null {
  try {
    return normalizeRoomCode(decodeURIComponent(segment));
  } catch {
    return null;
  }
}

// ---- the room list ----

async function watchRooms(client: LobbyClient): Promise<void> {
  stopWatching();
  let dir: RoomDirectory;
  try {
    dir = await RoomDirectory.watch(client);
  } catch {
    return; // the connection dropped; the next 'connected' watches again
  }
  if (store.state.phase !== 'lobby' || link.client !== client) {
    void dir.close();
    return;
  }
  directory = dir;
  store.update({ rooms: [...dir.rooms], roomsLoaded: true });
  dir.on('change', (list) => store.update({ rooms: [...list] }));
}

function stopWatching(): void {
  void directory?.close();
  directory = null;
}

// ---- your name ----

function setUpName(): void {
  for (const input of [ui.name, ui.joinName]) {
    input.value = store.state.name;
    input.maxLength = MAX_PLAYER_NAME;
  }
  ui.nameForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void commitName(ui.name, ui.nameError);
  });
  ui.name.addEventListener('change', () => void commitName(ui.name, ui.nameError));
}

/** Validates a name field; shows the problem and focuses it if there is one. */
function checkName(input: HTMLInputElement, error: HTMLParagraphElement): string | null {
  const problem = nameProblem(input.value);
  fieldError(error, problem, input);
  if (problem !== null) {
    input.focus();
    return null;
  }
  return normalizeName(input.value);
}

/** Saves a valid name here and on the live connection. */
async function commitName(input: HTMLInputElement, error: HTMLParagraphElement): Promise<string | null> {
  const name = checkName(input, error);
  if (name === null) return null;
  input.value = name;
  if (name !== store.state.name) {
    saveName(name);
    link.setName(name);
    store.update({ name });
  }
  const client = link.client;
  if (client && client.name !== name) await client.setName(name);
  return name;
}

// ---- create ----

function setUpCreate(): void {
  setUpFieldLimits();
  // An empty room name becomes "<name>'s room": say so before they submit.
  const hint = (): void => {
    const name = normalizeName(ui.name.value);
    ui.roomName.placeholder = name && nameProblem(name) === null ? `${name}’s room` : '';
  };
  ui.name.addEventListener('input', hint);
  hint();
  ui.createForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void createRoom();
  });
  // Measuring takes up to a second: start as soon as someone means to host.
  ui.createForm.addEventListener('focusin', () => void nearestRegion(), { once: true });
}

/** The region to host in (cluster with several regions only), measured once; shown under the form. */
async function nearestRegion(): Promise<RegionPick | null> {
  const pick = await regions.nearest();
  if (pick && store.state.regionPick !== pick) {
    store.update({ regionPick: pick });
    // No figure: a probe's time includes the browser's own gathering, so it only ranks the regions.
    ui.createRegion.textContent = `Hosted in ${pick.region}, the nearest region.`;
    ui.createRegion.hidden = false;
  }
  return pick;
}

async function createRoom(): Promise<void> {
  fieldError(ui.createError, null);
  const settings = checkRoomForm(nameProblem(ui.name.value) === null ? normalizeName(ui.name.value) : '');
  const name = checkName(ui.name, ui.nameError);
  if (name === null || settings === null) return;
  await busy(ui.createButton, ui.createError, async (client) => {
    await commitName(ui.name, ui.nameError);
    // A party lives on this node's session: its leader hosts here rather than leave it behind.
    const pick = party.active ? null : await nearestRegion();
    stopWatching();
    // The SDK follows the node of that region if it is not this one.
    await rooms.create(client, pick ? { ...settings, region: pick.region } : settings);
  });
}

// ---- play now ----

function setUpQuickPlay(): void {
  ui.quickForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void quickPlay();
  });
}

async function quickPlay(): Promise<void> {
  fieldError(ui.quickError, null);
  if (checkName(ui.name, ui.nameError) === null) return;
  await busy(ui.quickButton, ui.quickError, async (client) => {
    await commitName(ui.name, ui.nameError);
    stopWatching();
    await rooms.quickPlay(client, ui.quickMode.value);
  });
}

// ---- join by link, code or the list ----

function setUpJoin(): void {
  ui.codeForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const code = normalizeRoomCode(ui.roomCode.value);
    fieldError(ui.codeError, code === null ? 'A room code has 7 letters and digits, like ABC2345.' : null, ui.roomCode);
    if (code === null) {
      ui.roomCode.focus();
      return;
    }
    showJoin(code, false, true);
  });
  ui.roomList.addEventListener('click', (e) => {
    const watch = e.target instanceof Element ? e.target.closest<HTMLButtonElement>('button[data-watch]') : null;
    const watchCode = watch?.dataset['watch'];
    if (watchCode) {
      const client = link.client;
      if (!client) return;
      history.pushState(null, '', `/?watch=${watchCode}`);
      stopWatching();
      void watcher.watch(client, watchCode);
      return;
    }
    const button = e.target instanceof Element ? e.target.closest<HTMLButtonElement>('button[data-code]') : null;
    const code = button?.dataset['code'];
    if (code) showJoin(code, button?.dataset['password'] === '1', true);
  });
  ui.joinForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void joinRoom();
  });
  ui.roomFilter.addEventListener('input', () => render(store.state));
}

/**
 * Opens the join page for a code. From the lobby (a click is already the
 * intent) it joins at once when the name is set and no password is needed.
 */
function showJoin(code: string, needsPassword: boolean, fromLobby = false): void {
  const known: RoomSummary | undefined = store.state.rooms.find((r) => r.code === code);
  if (fromLobby) {
    history.pushState(null, '', `/r/${code}`);
    ui.joinName.value = ui.name.value.trim() || store.state.name;
    stopWatching();
  }
  ui.joinCode.textContent = code;
  ui.joinInfo.textContent = known
    ? `${known.name} · hosted by ${known.host} · ${known.players} of ${known.maxPlayers} players${known.region ? ` · in ${known.region}` : ''}`
    : '';
  ui.joinPasswordField.hidden = !needsPassword;
  store.update({ phase: 'name', joinCode: code, needsPassword });
  if (needsPassword) ui.joinPassword.focus();
  else if (fromLobby && nameProblem(ui.joinName.value) === null) void joinRoom();
}

async function joinRoom(): Promise<void> {
  const code = store.state.joinCode;
  fieldError(ui.joinError, null);
  const name = checkName(ui.joinName, ui.joinNameError);
  if (name === null || code === null) return;
  await busy(ui.joinButton, ui.joinError, async (client) => {
    if (name !== store.state.name) {
      saveName(name);
      link.setName(name);
      store.update({ name });
    }
    if (client.name !== name) await client.setName(name);
    const w = warm;
    warm = null;
    try {
      await rooms.join(client, code, ui.joinPassword.value, w?.create);
    } finally {
      w?.close(); // untaken only if the join failed before its offer
    }
  }, (err) => {
    if (err.code === 'wrong_password') {
      ui.joinPasswordField.hidden = false;
      store.update({ needsPassword: true });
      fieldError(ui.joinError, describe(err.code, err.message));
      ui.joinPassword.select();
      ui.joinPassword.focus();
      return true;
    }
    if (['room_not_found', 'room_full', 'kicked', 'banned', 'server_full', 'unsupported_version', 'room_lost'].includes(err.code)) {
      // A join's banned is the room host's ban: final, unlike the operator's at hello.
      const code = err.code === 'banned' ? 'room_banned' : err.code;
      store.update({ phase: 'error', error: { code, message: err.message } });
      return true;
    }
    return false;
  });
}

/**
 * Runs a lobby request with its button busy. Errors go under the form unless
 * `special` handled them; no connection at all says so without trying.
 */
async function busy(
  button: HTMLButtonElement,
  error: HTMLParagraphElement,
  run: (client: LobbyClient) => Promise<void>,
  special?: (err: LobbyError) => boolean,
): Promise<void> {
  const client = link.client;
  if (!client) {
    fieldError(error, describe('unreachable', ''));
    return;
  }
  mark('join-start');
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    await run(client);
  } catch (err) {
    if (err instanceof LobbyError) {
      if (special?.(err)) return;
      fieldError(error, describe(err.code, err.message));
    } else {
      fieldError(error, describe('internal', String(err)));
    }
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}
