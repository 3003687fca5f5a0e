// Mirrors protocol/errors.go: stable error codes and close reasons, plus the
// error the codec throws for bytes it refuses.

/** Codes the server puts in Error.code. Clients switch on them. */
export const ErrorCode = {
  BadMessage: 'bad_message',
  UnknownType: 'unknown_type',
  UnsupportedVersion: 'unsupported_version',
  HelloRequired: 'hello_required',
  InvalidArgument: 'invalid_argument',
  RoomNotFound: 'room_not_found',
  RoomFull: 'room_full',
  WrongPassword: 'wrong_password',
  AlreadyInRoom: 'already_in_room',
  NotInRoom: 'not_in_room',
  PeerNotFound: 'peer_not_found',
  Forbidden: 'forbidden',
  Kicked: 'kicked',
  NotReady: 'not_ready',
  NameRequired: 'name_required',
  ResumeFailed: 'resume_failed',
  RateLimited: 'rate_limited',
  ServerFull: 'server_full',
  Internal: 'internal',
  PartyNotFound: 'party_not_found',
  PartyFull: 'party_full',
  AlreadyInParty: 'already_in_party',
  NotInParty: 'not_in_party',
  /**
   * In a cluster, the room (or the region asked for) lives on another node:
   * ErrorBody.url is that node's lobby WebSocket URL. Connect there, hello
   * again and repeat the same request (the SDK does).
   */
  RoomElsewhere: 'room_elsewhere',
  /** The room's node stopped and the room with it: rooms do not move between nodes. */
  RoomLost: 'room_lost',
  /**
   * The cluster's directory, or the game's backend that checks joins, is
   * unreachable just now; nothing changed, try again.
   */
  Unavailable: 'unavailable',
  /** This server wants an identity token in hello and none was sent. */
  AuthRequired: 'auth_required',
  /** The identity token was refused; the message names why (expired, signature, ...). */
  AuthInvalid: 'auth_invalid',
  /** The keys to check the token could not be fetched just now; try again. */
  AuthUnavailable: 'auth_unavailable',
  /** The room admits verified players only. */
  MembersOnly: 'members_only',
  /** The game's backend (the operator's join hook) refused; ErrorBody.message says why, for the player. */
  JoinRefused: 'join_refused',
  /**
   * A ban refuses you: the room's host banned your user (joinRoom), or the
   * server's operator banned your user or network (hello, or before the
   * connection closes); the message says how long and why, for the player.
   */
  Banned: 'banned',
} as const;
export type ServerErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Why a player left or a room closed (PlayerLeft.reason, RoomClosed.reason). */
export const Reason = {
  /** The same verified user joined the room from another session, which took the seat. */
  Replaced: 'replaced',
  Left: 'left',
  Disconnect: 'disconnected',
  HostLeft: 'host_left',
  Kicked: 'kicked',
  /** The server's operator removed the player (it may not rejoin the room), from the admin page. */
  OperatorKicked: 'operator_kicked',
  /** The server's operator closed the room, from the admin page. */
  OperatorClosed: 'operator_closed',
  /** The room's node left the cluster (RoomClosed) or a member was on it (PlayerLeft). */
  RoomLost: 'room_lost',
  /** The host did not answer the server's hostCheck in time and another member took over (PlayerLeft, HostReplaced). */
  Unresponsive: 'unresponsive',
} as const;
export type CloseReason = (typeof Reason)[keyof typeof Reason];

/** What was wrong with a frame, like the sentinel errors in protocol/errors.go. */
export type ProtocolErrorKind = 'too_large' | 'malformed' | 'too_deep' | 'no_type' | 'unknown_type';

/** Thrown by the codec for a frame it will not encode or decode. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(
    readonly kind: ProtocolErrorKind,
    message: string,
  ) {
    super(`protocol: ${message}`);
  }
}
