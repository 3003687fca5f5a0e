import { ClientErrorCode, ErrorCode, LobbyError, Reason, type RoomEndReason } from '@hostrelay/sdk';

/** A sentence for a player about why the lobby or the party ended. */
export function explain(err: Error | null, relay: string, reason: RoomEndReason | null = null): string {
  if (err instanceof LobbyError) {
    switch (err.code) {
      case ErrorCode.RoomNotFound:
        return 'That party is over, or the link is wrong.';
      case ErrorCode.RoomFull:
        return 'That party is full.';
      case ClientErrorCode.Unreachable:
      case ClientErrorCode.Timeout:
        return `Cannot reach the hostrelay server at ${relay}.`;
      default:
        return err.message;
    }
  }
  if (err) return err.message;
  switch (reason) {
    case Reason.HostLeft:
      return 'The host left: the party is over.';
    case Reason.Kicked:
      return 'The host removed you from the party.';
    default:
      return 'The party is over.';
  }
}
