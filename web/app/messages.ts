// What the page says for each error code. Codes are the SDK's (server codes,
// client codes, peer codes) plus the room's close reasons.

const texts: Record<string, string> = {
  room_not_found: 'There is no room with this code. It may have closed already, or the code has a typo.',
  room_full: 'This room is full. Ask the host to raise the player limit, or try again when someone leaves.',
  wrong_password: 'This room needs a password.',
  kicked: 'The host removed you from this room, so you cannot rejoin it.',
  unreachable: 'Cannot reach the hostrelay server. Check your connection; we keep trying.',
  closed: 'Lost the connection to the server.',
  disconnected: 'Lost the connection to the server, and the room with it.',
  timeout: 'The server did not answer in time. Try again.',
  host_left: 'The host left, so the room closed.',
  operator_kicked: 'The server’s operator removed you from this room, so you cannot rejoin it.',
  operator_closed: 'The server’s operator closed this room.',
  rate_limited: 'Too many attempts. Wait a minute and try again.',
  server_full: 'This server has no room for another game right now. Try again later.',
  unsupported_version: 'This page is out of date. Reload it.',
  name_required: 'Pick a name first.',
  not_ready: 'Not everyone is ready yet.',
  forbidden: 'Only the host can do that.',
  party_not_found: 'That party is gone: everyone in it left. Start a new one.',
  party_full: 'That party is full.',
  already_in_party: 'You are in a party already. Leave it first.',
  not_in_party: 'You are not in a party.',
  ice_candidate_error: 'The relay server refused the game connection.',
  no_relay_candidates: 'Could not reach the relay server for the game connection.',
  connection_failed: 'The game connection failed.',
  negotiation_failed: 'Could not set up the game connection.',
  room_lost: 'The server hosting this room stopped, and the room is gone with it. Host a new one, or pick another room.',
  unavailable: 'The servers cannot reach each other just now. Nothing changed: try again in a moment.',
  redirect_loop: 'The servers could not agree where this room lives. Try again in a moment.',
  room_elsewhere: 'This room is on another server, which could not be reached.',
};

const titles: Record<string, string> = {
  room_not_found: 'Room not found',
  room_full: 'Room is full',
  kicked: 'Removed from the room',
  unreachable: 'Server unreachable',
  closed: 'Disconnected',
  disconnected: 'Disconnected',
  host_left: 'Room closed',
  operator_kicked: 'Removed from the room',
  operator_closed: 'Room closed',
  unsupported_version: 'Page out of date',
  room_lost: 'Room lost',
  banned: 'Banned',
  room_banned: 'Banned',
};

/** Codes after which trying the same thing again cannot help. */
const final = new Set(['room_not_found', 'host_left', 'kicked', 'room_banned', 'disconnected', 'operator_kicked', 'operator_closed', 'room_lost']);

/** The heading of the error view. */
export function titleOf(code: string): string {
  return titles[code] ?? 'Something went wrong';
}

/** Whether the error view offers "Try again". */
export function retryable(code: string): boolean {
  return !final.has(code);
}

/** A sentence for a person; falls back to the server's own message. */
export function describe(code: string, message: string): string {
  // The server says who banned what, for how long and why: its words are the news.
  // banned: the server's operator (it may lift the ban: Try again reloads);
  // room_banned: the room's host, for the room's life.
  if (code === 'banned' || code === 'room_banned') return sentence(message || 'you are banned');
  if (code === 'wrong_password' && /wrong password/i.test(message)) return 'That password is not right. Try again.';
  if (code === 'not_ready' && message) return `Not everyone is ready: ${message}.`;
  const text = texts[code];
  if (!text) return message || code;
  // Peer failures carry useful detail (e.g. "486 allocation quota").
  return code.startsWith('ice_') || code === 'no_relay_candidates' ? `${text} ${message}` : text;
}

/** message with a capital first letter and a full stop. */
function sentence(message: string): string {
  const m = message.trim();
  return m.charAt(0).toUpperCase() + m.slice(1) + (/[.!?]$/.test(m) ? '' : '.');
}
