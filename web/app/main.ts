import {
  LobbyClient,
  LobbyError,
  PeerError,
  RoomSession,
  normalizeRoomCode,
  type Player,
} from '../src/sdk';
import { MAX_PASSWORD, MAX_PLAYERS, MAX_PLAYER_NAME, MAX_ROOM_NAME, MIN_PLAYERS } from '../src/protocol';
import { PointerDemo } from './demo';
import { initialState, Store, type PlayerView } from './state';
import { installTestHooks } from './test-hooks';
import { render, setStatus, ui } from './view';

const NAME_KEY = 'hostrelay.name';
const pageStart = performance.now();

const shareCode = /^\/r\/([^/]+)\/?$/.exec(location.pathname)?.[1];
const store = new Store(initialState(shareCode === undefined ? 'lobby' : 'name'));
const { hooks, attach } = installTestHooks(pageStart);

let lobby: LobbyClient | null = null;
let session: RoomSession | null = null;
let demo: PointerDemo | null = null;
let maxPlayers = 0;

store.subscribe((s) => render(s, maxPlayers));
setUpForms();

if (shareCode !== undefined) {
  const code = normalizeRoomCode(decodeURIComponent(shareCode));
  if (code === null) {
    store.update({ phase: 'error', error: { code: 'room_not_found', message: 'this link has no valid room code' } });
  } else {
    ui.joinCode.textContent = code;
    ui.joinForm.dataset['code'] = code;
  }
}

function setUpForms(): void {
  const saved = localStorage.getItem(NAME_KEY) ?? '';
  for (const input of [ui.createName, ui.joinName]) {
    input.value = saved;
    input.maxLength = MAX_PLAYER_NAME;
  }
  ui.roomName.maxLength = MAX_ROOM_NAME;
  ui.roomPassword.maxLength = MAX_PASSWORD;
  ui.joinPassword.maxLength = MAX_PASSWORD;
  ui.maxPlayers.min = String(MIN_PLAYERS);
  ui.maxPlayers.max = String(MAX_PLAYERS);

  ui.createForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void createRoom();
  });
  ui.joinForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void joinRoom();
  });
  ui.codeForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const code = normalizeRoomCode(ui.roomCode.value);
    if (code === null) fail('invalid_argument', 'A room code has 7 letters and digits, like ABC2345.');
    else location.assign(`/r/${code}`);
  });
  ui.copyButton.addEventListener('click', () => void copyLink());
  ui.leaveButton.addEventListener('click', () => void leave());
  ui.retryButton.addEventListener('click', () => location.reload());
}

function fail(code: string, message: string): void {
  store.update({ error: { code, message } });
}

function lobbyUrl(): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

/** Reuses the lobby connection across attempts (e.g. a wrong password) while the name stays the same. */
async function connect(name: string): Promise<LobbyClient> {
  if (lobby?.connected && lobby.name === name) return lobby;
  lobby?.close();
  setStatus('Connecting…');
  lobby = await LobbyClient.connect(lobbyUrl(), name);
  return lobby;
}

function readName(input: HTMLInputElement): string | null {
  const name = input.value.trim();
  if (name === '') {
    fail('invalid_argument', 'Enter a name so the others know who you are.');
    input.focus();
    return null;
  }
  return name;
}

async function createRoom(): Promise<void> {
  const name = readName(ui.createName);
  if (name === null) return;
  const roomName = ui.roomName.value.trim() || `${name}'s room`;
  const max = Number(ui.maxPlayers.value);
  if (!Number.isInteger(max) || max < MIN_PLAYERS || max > MAX_PLAYERS) {
    fail('invalid_argument', `Max players must be between ${MIN_PLAYERS} and ${MAX_PLAYERS}.`);
    ui.maxPlayers.focus();
    return;
  }
  await attempt(ui.createButton, name, (client) =>
    RoomSession.create(client, {
      name: roomName,
      maxPlayers: max,
      public: ui.roomPublic.checked,
      password: ui.roomPassword.value,
    }),
  );
}

async function joinRoom(): Promise<void> {
  const code = ui.joinForm.dataset['code'];
  const name = readName(ui.joinName);
  if (name === null || code === undefined) return;
  await attempt(ui.joinButton, name, (client) => RoomSession.join(client, code, ui.joinPassword.value));
}

async function attempt(
  button: HTMLButtonElement,
  name: string,
  open: (client: LobbyClient) => Promise<RoomSession>,
): Promise<void> {
  hooks.marks.joinStart = performance.now();
  button.disabled = true;
  store.update({ error: null });
  try {
    const s = await open(await connect(name));
    localStorage.setItem(NAME_KEY, name);
    enterRoom(s);
  } catch (err) {
    onAttemptFailed(err);
  } finally {
    button.disabled = false;
    setStatus('');
  }
}

function onAttemptFailed(err: unknown): void {
  if (!(err instanceof LobbyError)) {
    store.update({ phase: 'error', error: { code: 'internal', message: String(err) } });
    return;
  }
  const error = { code: err.code, message: err.message };
  switch (err.code) {
    case 'wrong_password':
      ui.joinPasswordField.hidden = false;
      ui.joinPassword.focus();
      store.update({ error });
      return;
    case 'invalid_argument':
    case 'rate_limited':
    case 'timeout':
      store.update({ error });
      return;
    default:
      store.update({ phase: 'error', error });
  }
}

function playerViews(s: RoomSession): PlayerView[] {
  return s.players.map((p: Player) => ({ id: p.id, name: p.name, host: p.id === s.hostId }));
}

function enterRoom(s: RoomSession): void {
  session = s;
  maxPlayers = s.room.maxPlayers;
  const link = `${location.origin}/r/${s.room.code}`;
  ui.roomNameOut.textContent = s.room.name;
  ui.roomCodeOut.textContent = s.room.code;
  ui.shareLink.value = link;
  ui.demoHelp.textContent =
    s.role === 'host'
      ? 'Each player’s pointer arrives here over the unreliable game channel; this tab echoes it back.'
      : 'Move your pointer over the canvas: it goes to the host 30 times a second. The ring is what the host echoed back.';
  document.title = `${s.room.name} · hostrelay`;

  const statsTimer = window.setInterval(() => {
    const { rttMs, packetsReceived } = demo?.stats ?? { rttMs: null, packetsReceived: 0 };
    if (rttMs !== store.state.rttMs || packetsReceived !== store.state.packetsReceived) {
      store.update({ rttMs, packetsReceived });
    }
  }, 200);
  const refreshPlayers = (): void => store.update({ players: playerViews(s) });
  s.on('playerJoined', refreshPlayers);
  s.on('playerLeft', refreshPlayers);
  s.on('peerOpen', () => {
    hooks.marks.channelOpen ??= performance.now();
    store.update({ openPeers: s.openPeers });
  });
  s.on('peerClose', () => store.update({ openPeers: s.openPeers }));
  s.on('error', (err: PeerError | LobbyError) => store.update({ error: { code: err.code, message: err.message } }));
  s.on('closed', (reason) => {
    demo?.stop();
    clearInterval(statsTimer);
    if (reason === 'left' || reason === 'pagehide') return;
    store.update({ phase: 'error', openPeers: [], error: { code: reason, message: reason } });
  });

  demo = new PointerDemo(ui.canvas, s, (id) => s.players.find((p) => p.id === id)?.name ?? id);

  attach({
    sendPackets: (n) => demo?.sendTestPackets(n) ?? 0,
    receivedCount: () => demo?.stats.testReceived ?? 0,
    selectedCandidatePairTypes: async () =>
      (await s.selectedCandidatePairs()).map(({ local, remote }) => ({ local, remote })),
  });

  store.update({
    phase: 'room',
    role: s.role,
    roomCode: s.room.code,
    you: s.you,
    players: playerViews(s),
    openPeers: s.openPeers,
    error: null,
  });
}

async function copyLink(): Promise<void> {
  const link = ui.shareLink.value;
  try {
    await navigator.clipboard.writeText(link);
  } catch {
    // Clipboard access can be refused; leave the link selected to copy by hand.
    ui.shareLink.select();
    setStatus('Press Ctrl+C to copy the link.');
    return;
  }
  ui.copyButton.textContent = 'Copied';
  setStatus('Link copied.');
  setTimeout(() => {
    ui.copyButton.textContent = 'Copy';
  }, 1500);
}

async function leave(): Promise<void> {
  ui.leaveButton.disabled = true;
  try {
    await session?.leave();
  } catch {
    // Leaving a connection that is already gone is still leaving.
  }
  lobby?.close();
  location.assign('/');
}
