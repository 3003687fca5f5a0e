import { MAX_PLAYER_NAME } from '../src/protocol';

// Who this browser is: the player's chosen name and a random device id, both
// kept in localStorage. The device id is what a room bans when its host kicks
// us, so a reload or the same share link does not get a kicked player back in.

const NAME_KEY = 'hostrelay.name';
const DEVICE_KEY = 'hostrelay.device';

export function savedName(): string {
  return localStorage.getItem(NAME_KEY) ?? '';
}

export function saveName(name: string): void {
  localStorage.setItem(NAME_KEY, name);
}

/** Why a name cannot be used, in words for the player, or null if it is fine. Mirrors protocol.ValidatePlayerName. */
export function nameProblem(raw: string): string | null {
  const name = raw.trim();
  if (name === '') return 'Pick a name so the others know who you are.';
  if ([...name].length > MAX_PLAYER_NAME) return `Names are at most ${MAX_PLAYER_NAME} characters.`;
  // Control characters (Unicode Cc) would end up in other players' lobbies.
  if (/\p{Cc}/u.test(name)) return 'Names cannot contain control characters.';
  return null;
}

/** The device id, made on first use: 22 random base64url characters after "d_". */
export function deviceId(): string {
  const saved = localStorage.getItem(DEVICE_KEY);
  if (saved && /^[A-Za-z0-9_-]{16,64}$/.test(saved)) return saved;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const id = `d_${btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
  localStorage.setItem(DEVICE_KEY, id);
  return id;
}
