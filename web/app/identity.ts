import { normalizeName, playerNameProblem } from '@hostrelay/protocol';

// Who this browser is: the player's chosen name and a random device id, both
// kept in localStorage. The device id is what a room bans when its host kicks
// us, so a reload or the same share link does not get a kicked player back in.

const NAME_KEY = 'hostrelay.name';
const DEVICE_KEY = 'hostrelay.device';

const TOKEN_KEY = 'hostrelay.token';

/**
 * The identity token a game's page handed us in the URL fragment
 * (#token=…, never sent to any server by the browser), kept for this tab in
 * sessionStorage and taken out of the address bar so it is not shared with
 * a copied link. '' when there is none.
 */
export function takeToken(): string {
  const params = new URLSearchParams(location.hash.slice(1));
  const fromHash = params.get('token');
  if (fromHash !== null) {
    sessionStorage.setItem(TOKEN_KEY, fromHash);
    params.delete('token');
    const rest = params.toString();
    history.replaceState(history.state, '', location.pathname + location.search + (rest === '' ? '' : `#${rest}`));
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function savedName(): string {
  return localStorage.getItem(NAME_KEY) ?? '';
}

export function saveName(name: string): void {
  localStorage.setItem(NAME_KEY, name);
}

/**
 * Why a name cannot be used, in words for the player, or null if it is fine.
 * The rules are the server's (protocol.ValidatePlayerName), applied to the
 * name as the server keeps it (normalizeName: NFC, trimmed, one space).
 */
export function nameProblem(raw: string): string | null {
  const problem = playerNameProblem(normalizeName(raw));
  return problem === null ? null : inWords(problem, 'Names', 'Pick a name so the others know who you are.');
}

/**
 * A protocol reason ("contains an invisible character (U+200B)") as a
 * sentence about `what` ("Names", "Room names"). The code point stays: it is
 * the only way to point at a character nobody can see.
 */
export function inWords(reason: string, what: string, empty: string): string {
  const at = / \((U\+[0-9A-F]+)\)$/.exec(reason)?.[1];
  const cp = at ? ` (${at})` : '';
  if (reason === 'is empty') return empty;
  if (reason.startsWith('is longer than')) return `${what} are at most ${reason.replace(/\D+/g, '')} characters.`;
  if (reason === 'contains a control character') return `${what} cannot contain control characters.`;
  if (reason.startsWith('contains a bidirectional')) return `${what} cannot contain characters that change the text’s direction${cp}.`;
  if (reason.startsWith('contains an invisible') || reason.startsWith('contains a variation selector'))
    return `${what} cannot contain invisible characters${cp}.`;
  if (reason.startsWith('starts with a combining mark')) return `${what} cannot start with an accent on its own${cp}.`;
  if (reason === 'has no visible character') return `${what} need at least one visible character.`;
  return `${what} cannot contain this character${cp}.`;
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
