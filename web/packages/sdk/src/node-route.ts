import { ClientErrorCode, LobbyError } from './errors.js';

/**
 * How many times one request follows room_elsewhere. One hop reaches the
 * room's node; a second covers a directory that moved on meanwhile (a
 * region's pick answering for a room that went elsewhere). More means the
 * nodes disagree about where the room lives.
 */
export const MAX_NODE_HOPS = 2;

/**
 * The lobby URLs one request has been sent to, starting where it was first
 * sent. Each room_elsewhere names the next; a node seen twice, a third hop
 * or a URL that is no lobby WebSocket ends the request with a LobbyError
 * instead of a connection loop between nodes.
 */
export class NodeRoute {
  private readonly seen: string[];

  constructor(
    private readonly what: string,
    start: string,
  ) {
    this.seen = [start];
  }

  /** The URL to move to for this room_elsewhere; throws if it must not be followed. */
  next(url: string): string {
    if (!isLobbyUrl(url)) {
      throw new LobbyError(
        ClientErrorCode.Protocol,
        `${this.what}: the server sent us to another node without a lobby WebSocket URL (${JSON.stringify(url)})`,
      );
    }
    if (this.seen.includes(url) || this.seen.length > MAX_NODE_HOPS) {
      throw new LobbyError(
        ClientErrorCode.RedirectLoop,
        `${this.what}: the cluster's nodes keep sending us elsewhere (${[...this.seen, url].join(' → ')}); gave up after ${this.seen.length - 1} moves`,
      );
    }
    this.seen.push(url);
    return url;
  }
}

function isLobbyUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'ws:' || u.protocol === 'wss:';
  } catch {
    return false;
  }
}
