// The page around the game: a name, "Create game" (or "Join game" when the
// page was opened from a share link), the share link, then Tag.
import { LobbyClient, lobbyUrl, RoomSession, shareLink } from '@hostrelay/sdk';
import { MAX_PLAYERS } from './rules';
import { tag } from './tag';
import './style.css';

const params = new URLSearchParams(location.search);
/** The room to join, from a share link (?room=CODE); none: create one. */
const code = params.get('room');
/** The hostrelay server: ?relay=, else the build's VITE_HOSTRELAY_URL, else this page's own origin. */
const relay = params.get('relay') || import.meta.env.VITE_HOSTRELAY_URL || location.origin;

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const form = $<HTMLFormElement>('start');
const nameInput = $<HTMLInputElement>('name');
const go = $<HTMLButtonElement>('go');
const error = $<HTMLElement>('error');
const linkInput = $<HTMLInputElement>('share-link');

nameInput.value = localStorage.getItem('tag.name') ?? '';
if (code) go.textContent = 'Join game';

form.addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = nameInput.value.trim();
  if (!name) return;
  localStorage.setItem('tag.name', name);
  go.disabled = true;
  error.textContent = '';
  let lobby: LobbyClient | null = null;
  try {
    lobby = await LobbyClient.connect(lobbyUrl(relay), name);
    const session = code
      ? await RoomSession.join(lobby, code)
      : await RoomSession.create(lobby, { name: `${name}'s Tag`, maxPlayers: MAX_PLAYERS, public: false, mode: tag.mode });
    form.hidden = true;
    linkInput.value = shareLink(session.room.code);
    $('share').hidden = false;
    document.body.classList.add('playing');
    tag.mount({ session, container: $('game') });
  } catch (err) {
    lobby?.close();
    // LobbyError messages say what went wrong (room_not_found, room_full, origin not allowed…).
    error.textContent = err instanceof Error ? err.message : String(err);
    go.disabled = false;
  }
});

$('copy').addEventListener('click', () => {
  linkInput.select();
  void navigator.clipboard?.writeText(linkInput.value);
});
