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

const serverCodes = new Set<string>(Object.values(ErrorCode));

/** A LobbyError from a server Error body; unknown codes become 'internal'. */
export function lobbyErrorFrom(body: { code: string; msg: string }): LobbyError {
  const code = serverCodes.has(body.code) ? (body.code as ServerErrorCode) : ErrorCode.Internal;
  return new LobbyError(code, body.msg || body.code || 'server error');
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
