import { ErrorCode, type ServerErrorCode } from '@hostrelay/protocol';

/** Codes for failures the client detects itself, beside the server's codes. */
export const ClientErrorCode = {
  /** The WebSocket could not be opened. */
  Unreachable: 'unreachable',
  /** A request got no reply in time. */
  Timeout: 'timeout',
  /** The connection closed while a request was waiting, or before it was sent. */
  Closed: 'closed',
  /** The server sent something this client cannot understand. */
  Protocol: 'protocol',
  /**
   * The cluster's nodes kept answering room_elsewhere: a node sent us back
   * where we had been, or past MAX_NODE_HOPS moves. Their directories
   * disagree; trying again later may work.
   */
  RedirectLoop: 'redirect_loop',
} as const;
export type ClientErrorCodeName = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

export type LobbyErrorCode = ServerErrorCode | ClientErrorCodeName;

/** A failed lobby request or connection. `code` is stable; switch on it. */
export class LobbyError extends Error {
  override readonly name = 'LobbyError';
  constructor(
    readonly code: LobbyErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * room_elsewhere as a request gets it: where the room lives. LobbyClient
 * follows it, so a caller sees it only from a request sent outside that
 * (none of the public ones).
 */
export class RoomElsewhereError extends LobbyError {
  constructor(
    message: string,
    /** The lobby WebSocket URL of the node that owns the room. */
    readonly url: string,
    /** That node's region ('' if the server did not say). */
    readonly region: string,
  ) {
    super(ErrorCode.RoomElsewhere, message);
  }
}

const serverCodes = new Set<string>(Object.values(ErrorCode));

/** A LobbyError from a server Error body; unknown codes become 'internal'. */
export function lobbyErrorFrom(body: { code: string; msg: string; url?: string; region?: string }): LobbyError {
  const message = body.msg || body.code || 'server error';
  if (body.code === ErrorCode.RoomElsewhere) return new RoomElsewhereError(message, body.url ?? '', body.region ?? '');
  const code = serverCodes.has(body.code) ? (body.code as ServerErrorCode) : ErrorCode.Internal;
  return new LobbyError(code, message);
}

/** Codes for a peer connection that failed. */
export const PeerErrorCode = {
  /** The TURN server refused us (e.g. 486 allocation quota, 401 credentials). */
  IceCandidateError: 'ice_candidate_error',
  /** ICE gathering finished without a single relay candidate. */
  NoRelayCandidates: 'no_relay_candidates',
  /** ICE or DTLS failed after gathering. */
  ConnectionFailed: 'connection_failed',
  /** Creating or applying an offer or answer failed. */
  NegotiationFailed: 'negotiation_failed',
} as const;
export type PeerErrorCodeName = (typeof PeerErrorCode)[keyof typeof PeerErrorCode];

/** A peer connection that failed; `peerId` names the other end. */
export class PeerError extends Error {
  override readonly name = 'PeerError';
  constructor(
    readonly code: PeerErrorCodeName,
    readonly peerId: string,
    message: string,
  ) {
    super(message);
  }
}
