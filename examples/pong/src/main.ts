// The page around the game: a name, "Create game" (or "Join game" when the
// page was opened from a share link), the share link, then Pong.
import { ClientErrorCode, ErrorCode, LobbyClient, LobbyError, lobbyUrl, RoomSession, shareLink } from '@hostrelay/sdk';
import { pong } from './pong';
import './style.css';

const params = new URLSearchParams(location.search);
/** The room to join, from a share link (?room=CODE); none: create one. */
const code = params.get('room');
/**
 * The hostrelay server: this page's own origin unless ?relay= or the build's
 * VITE_HOSTRELAY_URL names another (a page hosted elsewhere; the server then
 * needs -allowed-origins for the page's origin).
 */
const relay = params.get('relay') || import.meta.env.VITE_HOSTRELAY_URL || location.origin;

function explain(err: unknown): string {
  if (!(err instanceof LobbyError)) return String(err);
  switch (err.code) {
    case ErrorCode.RoomNotFound:
      return `There is no game ${code}: it has ended, or the link is wrong.`;
    case ErrorCode.RoomFull:
      return 'That game is full.';
    case ClientErrorCode.Unreachable:
    case ClientErrorCode.Timeout:
      return `Cannot reach the hostrelay server at ${relay}.`;
    default:
      return err.message;
  }
}

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const form = $<HTMLFormElement>('start');
const nameInput = $<HTMLInputElement>('name');
const go = $<HTMLButtonElement>('go');
const error = $<HTMLElement>('error');
const linkInput = $<HTMLInputElement>('share-link');

nameInput.value = localStorage.getItem('pong.name') ?? '';
if (code) go.textContent = 'Join game';

form.addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = nameInput.value.trim();
  if (!name) return;
  localStorage.setItem('pong.name', name);
  go.disabled = true;
  error.textContent = '';
  let lobby: LobbyClient | null = null;
  try {
    lobby = await LobbyClient.connect(lobbyUrl(relay), name);
    const session = code
      ? await RoomSession.join(lobby, code)
      : await RoomSession.create(lobby, { name: `${name}'s Pong`, maxPlayers: 8, public: false, mode: pong.mode });
    form.hidden = true;
    linkInput.value = shareLink(session.room.code);
    if (code) $('share-label').textContent = 'Link to this game (a third player watches)';
    $('share').hidden = false;
    pong.mount({ session, container: $('game') });
  } catch (err) {
    lobby?.close();
    error.textContent = explain(err);
    go.disabled = false;
  }
});

$('copy').addEventListener('click', () => {
  linkInput.select();
  void navigator.clipboard?.writeText(linkInput.value);
});
