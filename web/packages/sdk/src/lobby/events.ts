import {
  bodyOf,
  type ChatMessage,
  type GameStarted,
  type HostChanged,
  type HostCheck,
  type HostReplaced,
  type Ice,
  type MessageMap,
  type MessageTypeName,
  type Party,
  type Player,
  type PlayerLeft,
  type RoomClosed,
  type RoomInfo,
  type RoomJoined,
  type RoomListUpdate,
  type Signal,
  type SpectateEnded,
  type SpectatorFrame,
} from '@hostrelay/protocol';
import type { Emitter } from '../emitter.js';
import { lobbyErrorFrom, type LobbyError } from '../errors.js';

/** Where a client moved: lobby WebSocket URLs, and the new node's id and region ('' if it did not say). */
export interface NodeMove {
  from: string;
  to: string;
  node: string;
  region: string;
}

export interface LobbyEvents {
  playerJoined: [player: Player];
  playerLeft: [event: PlayerLeft];
  roomClosed: [event: RoomClosed];
  signal: [signal: Signal];
  /** A member's name, ready state or ping changed (ours included). */
  playerUpdated: [player: Player];
  /** The host changed the room's settings. */
  roomUpdated: [room: RoomInfo];
  /** The host started the game. */
  gameStarted: [event: GameStarted];
  /** A chat line of our room (ours come back too). Plain text: render it as text. */
  chatMessage: [message: ChatMessage];
  /** The watched room list changed (after watchRooms). */
  roomListUpdate: [update: RoomListUpdate];
  /** The room's host left and the server promoted another member (rooms made with migrate). */
  hostChanged: [event: HostChanged];
  /** Fresh TURN credentials for this session, before the old ones expire. */
  iceRefresh: [ice: Ice];
  /** The server asked us (the host) for a sign of life; the client has already answered it. */
  hostCheck: [check: HostCheck];
  /**
   * We were the host, did not answer a hostCheck in time (the page was
   * frozen), and `host` took over `room`: this session is out of the room.
   */
  hostReplaced: [event: HostReplaced];
  /**
   * Our party's leader pressed Play now and the server put us in a room with
   * the party. Start a RoomSession from it in the listener (synchronously):
   * the room's events follow at once.
   */
  roomJoined: [joined: RoomJoined];
  /** Our party changed: a member joined, left or was renamed, or the leader changed. */
  partyUpdated: [party: Party];
  /** A frame of the room we watch (after spectate), the server's delay behind the players. SpectatorSession reads these. */
  spectatorFrame: [frame: SpectatorFrame];
  /** We no longer watch: the room closed (`reason` as roomClosed). */
  spectateEnded: [event: SpectateEnded];
  /** A server notice (an Error with no request) or a frame we could not read. */
  error: [error: LobbyError];
  /** The connection dropped and we are taking the seat back (with `resume`); `attempt` counts from 1. */
  reconnecting: [info: { attempt: number; code: number; reason: string }];
  /** The seat is back: the same session, with every missed frame replayed. */
  resumed: [];
  /**
   * A request was answered room_elsewhere (the room, or the region asked
   * for, lives on another node of the cluster) and this client moved there:
   * the old connection closed cleanly, a new session said hello on `to`,
   * and the request went again. `url`, `node`, `region` and `session`
   * already describe the new node, and a resume goes there. Rooms are
   * listed on every node, so RoomDirectory watches again by itself.
   */
  moved: [move: NodeMove];
  /**
   * The session is over: closed by us, by the server, or a drop we could not
   * resume. `error` is the server's refusal when it said why: code
   * 'room_lost' when the node holding our seat (and room) stopped.
   */
  close: [info: { code: number; reason: string; error: LobbyError | null }];
}

type EventHandler<T extends MessageTypeName> = (events: Emitter<LobbyEvents>, body: MessageMap[T]) => void;

/**
 * The server's events (frames with id 0), each as the LobbyEvents event it
 * becomes. A type missing here means nothing to a client: replies without
 * an id, client-only types.
 */
const EVENT_FRAMES: { [T in MessageTypeName]?: EventHandler<T> } = {
  playerJoined: (e, b) => e.emit('playerJoined', b.player),
  playerLeft: (e, b) => e.emit('playerLeft', b),
  roomClosed: (e, b) => e.emit('roomClosed', b),
  signal: (e, b) => e.emit('signal', b),
  playerUpdated: (e, b) => e.emit('playerUpdated', b.player),
  roomUpdated: (e, b) => e.emit('roomUpdated', b.room),
  gameStarted: (e, b) => e.emit('gameStarted', b),
  chatMessage: (e, b) => e.emit('chatMessage', b),
  roomListUpdate: (e, b) => e.emit('roomListUpdate', b),
  hostChanged: (e, b) => e.emit('hostChanged', b),
  iceRefresh: (e, b) => e.emit('iceRefresh', b.ice),
  hostCheck: (e, b) => e.emit('hostCheck', b),
  hostReplaced: (e, b) => e.emit('hostReplaced', b),
  roomJoined: (e, b) => e.emit('roomJoined', b),
  partyUpdated: (e, b) => e.emit('partyUpdated', b.party),
  spectatorFrame: (e, b) => e.emit('spectatorFrame', b),
  spectateEnded: (e, b) => e.emit('spectateEnded', b),
  error: (e, b) => e.emit('error', lobbyErrorFrom(b)),
};

/** Emits a server event frame as its LobbyEvents event. */
export function dispatchEvent<T extends MessageTypeName>(events: Emitter<LobbyEvents>, frame: { t: T; b?: MessageMap[T] }): void {
  const handler: EventHandler<T> | undefined = EVENT_FRAMES[frame.t];
  handler?.(events, bodyOf(frame));
}
