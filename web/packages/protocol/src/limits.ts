// Mirrors protocol/limits.go. These limits are part of the protocol: a peer
// that respects them is never refused for size.

/** The protocol version a client announces in Hello. */
export const VERSION = 1;

/** The largest WebSocket frame either side may send. */
export const MAX_FRAME = 16 << 10;
/** Container nesting allowed in a frame. */
export const MAX_DEPTH = 8;

export const MAX_PLAYER_NAME = 32; // runes
export const MAX_ROOM_NAME = 48; // runes
export const MAX_PASSWORD = 64; // bytes
export const MAX_SDP = 8192; // bytes
export const MAX_CANDIDATE = 512; // bytes
export const MAX_MID = 32; // bytes
export const MIN_PLAYERS = 2;
export const MAX_PLAYERS = 16;
export const ROOM_CODE_LENGTH = 7;
export const MAX_MODE = 24; // runes of a game mode label
export const MAX_CHAT_TEXT = 200; // runes of one chat line
export const MIN_DEVICE = 16; // bytes of hello.device
export const MAX_DEVICE = 64; // bytes of hello.device
export const MAX_PARTY_SIZE = 4; // members of one party
export const MAX_REGION = 32; // bytes of a region label: a-z, 0-9, '-', '_', '.'
export const MAX_AUTH_TOKEN = 4096; // bytes of hello.token
export const MAX_USER_ID = 128; // bytes of player.userId
export const MAX_META = 512; // bytes of player.meta (compact JSON)
/**
 * The most bytes of spectatorFrame.data any server takes (MAX_FRAME less room
 * for the envelope); a server may take fewer and says so in spectating.maxData.
 */
export const MAX_SPECTATOR_DATA = MAX_FRAME - 64;
/** Spectator frames a room's host may send per second (a bucket of as many), protocol/spectate.go's default. */
export const SPECTATOR_FRAMES_PER_SECOND = 20;
/**
 * The longest a change of a room's spectator count (roomInfo.spectators) waits
 * before the members hear it as roomUpdated: changes within it come as one
 * (protocol/spectate.go's SpectatorCountInterval).
 */
export const SPECTATOR_COUNT_INTERVAL_MS = 250;
/** The size of a room quickPlay makes when its maxPlayers is 0. */
export const DEFAULT_QUICK_PLAYERS = 8;

/** Leaves out 0, O, 1, I, L (read alike) and U (accidental words). */
export const ROOM_CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Upper-cases a typed room code and drops spaces and dashes, like
 * protocol.NormalizeRoomCode; returns null if it is not a well-formed code.
 */
export function normalizeRoomCode(input: string): string | null {
  if (input.length > 4 * ROOM_CODE_LENGTH) return null;
  let code = '';
  for (const ch of input.toUpperCase()) {
    if (ch === ' ' || ch === '-') continue;
    if (!ROOM_CODE_ALPHABET.includes(ch)) return null;
    code += ch;
  }
  return code.length === ROOM_CODE_LENGTH ? code : null;
}

/**
 * Why `region` is not a valid region label (createRoom.region), in the
 * server's words, or null; like protocol.ValidateRegion.
 */
export function regionProblem(region: string): string | null {
  // A label is ASCII, so its length in UTF-16 units is its length in bytes.
  if (region === '' || region.length > MAX_REGION) return `must be 1 to ${MAX_REGION} bytes`;
  if (!/^[a-z0-9._-]+$/.test(region)) return "may hold only a-z, 0-9, '-', '_' and '.'";
  return null;
}
