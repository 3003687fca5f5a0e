import type { CreateRoomOptions } from '@hostrelay/sdk';
import { MAX_PASSWORD, MAX_PLAYERS, MAX_ROOM_NAME, MIN_PLAYERS, normalizeName, textProblem } from '@hostrelay/protocol';
import { fieldError, ui } from './dom';
import { GAMES, maxPlayersOf } from './games';
import { inWords } from './identity';

/** Sets the create form's input limits from the protocol's, and its game modes from the games the app has. */
export function setUpFieldLimits(): void {
  ui.roomMode.replaceChildren(...GAMES.map((g) => new Option(g.mode)));
  // A game that seats fewer (the duel: 2) caps the field, and brings a
  // larger value down to its cap when picked.
  const capToMode = (): void => {
    const cap = maxPlayersOf(ui.roomMode.value);
    ui.maxPlayers.max = String(cap);
    if (Number(ui.maxPlayers.value) > cap) ui.maxPlayers.value = String(cap);
  };
  ui.roomMode.addEventListener('change', capToMode);
  capToMode();
  ui.roomName.maxLength = MAX_ROOM_NAME;
  ui.roomPassword.maxLength = MAX_PASSWORD;
  ui.maxPlayers.min = String(MIN_PLAYERS);
}

/**
 * Reads and validates the create form, showing each problem under its field
 * and focusing the first. An empty room name becomes "<name>'s room".
 */
export function checkRoomForm(playerName: string): CreateRoomOptions | null {
  const problems: [HTMLInputElement, HTMLParagraphElement, string | null][] = [];
  const roomName = normalizeName(ui.roomName.value) || (playerName ? `${playerName}’s room` : '');
  const roomProblem = textProblem(roomName, MAX_ROOM_NAME);
  problems.push([
    ui.roomName,
    ui.roomNameError,
    roomProblem === null ? null : inWords(roomProblem, 'Room names', 'Give the room a name.'),
  ]);
  const max = Number(ui.maxPlayers.value);
  const cap = maxPlayersOf(ui.roomMode.value);
  problems.push([
    ui.maxPlayers,
    ui.maxPlayersError,
    Number.isInteger(max) && max >= MIN_PLAYERS && max <= cap
      ? null
      : `Max players must be a whole number from ${MIN_PLAYERS} to ${cap}${cap < MAX_PLAYERS ? ` for ${ui.roomMode.value}` : ''}.`,
  ]);
  const password = ui.roomPassword.value;
  problems.push([
    ui.roomPassword,
    ui.roomPasswordError,
    new TextEncoder().encode(password).length > MAX_PASSWORD ? `Passwords are at most ${MAX_PASSWORD} bytes.` : null,
  ]);
  for (const [input, p, problem] of problems) fieldError(p, problem, input);
  const first = problems.find(([, , problem]) => problem !== null);
  if (first) {
    first[0].focus();
    return null;
  }
  return {
    name: roomName,
    maxPlayers: max,
    public: ui.roomPublic.checked,
    password: password || undefined,
    mode: ui.roomMode.value,
    migrate: ui.roomMigrate.checked,
  };
}
