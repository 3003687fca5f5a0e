// The admin API (server/admin.go) as the page uses it: the token goes in an
// Authorization header on every call, never in a URL, and no cookie is
// involved, so no other site can make the browser act with it.

/** GET /api/v1/admin/overview. */
export interface Overview {
  server: ServerFigures;
  rooms: AdminRoom[];
  /** Every live TURN allocation; room and player are absent outside a room. */
  allocations: AdminAllocation[];
}

export interface ServerFigures {
  version: string;
  goVersion: string;
  protocol: number;
  startedAt: string;
  /** The server's clock at this poll: rates use the server's intervals, not the page's. */
  now: string;
  uptimeSeconds: number;
  sessions: number;
  rooms: number;
  players: number;
  allocations: number;
  /** What the live allocations relayed (falls when one closes). */
  relayedBytes: number;
  /** Every byte relayed since start: only grows. */
  relayedBytesTotal: number;
  conns: Record<string, number>;
  turn: { allocations: number; dropped: { policy: number; stray: number; overflow: number; bandwidth: number } };
}

export interface AdminRoom {
  code: string;
  name: string;
  createdAt: string;
  ageSeconds: number;
  public: boolean;
  hasPassword: boolean;
  started: boolean;
  migrate: boolean;
  mode: string;
  maxPlayers: number;
  /** The host's player id. */
  host: string;
  players: AdminPlayer[];
  allocations: number;
  relayedBytes: number;
}

export interface AdminPlayer {
  id: string;
  name: string;
  session: string;
  host: boolean;
  ready: boolean;
  away: boolean;
  /** 0 until measured. */
  pingMs: number;
  allocations: number;
  relayedBytes: number;
}

export interface AdminAllocation {
  /** Unique for the server's life: a rate subtracts relayedBytes of the same id. */
  id: number;
  session: string;
  room?: string;
  player?: string;
  transport: 'udp' | 'tcp' | 'tls';
  client: string;
  relay: string;
  createdAt: string;
  relayedBytes: number;
}

/** A server-wide ban (GET /api/v1/admin/bans): a user id or a network, until expiresAt. */
export interface AdminBan {
  /** "user:<id>" or "ip:<prefix>": what DELETE takes. */
  id: string;
  user?: string;
  /** A CIDR prefix. */
  ip?: string;
  reason?: string;
  createdAt: string;
  expiresAt: string;
  remainingSeconds: number;
}

/** GET /api/v1/admin/bans. */
export interface BanList {
  now: string;
  /** -bans-max. */
  max: number;
  bans: AdminBan[];
}

/** POST /api/v1/admin/bans: one of user and ip; duration as Go writes it ("90m", "24h"). */
export interface BanRequest {
  user?: string;
  ip?: string;
  duration: string;
  reason: string;
}

/** A refusal as the API words it, or unreachable (status 0) when no answer came. */
export interface ApiFailure {
  status: number;
  code: string;
  message: string;
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: ApiFailure };

/** Calls the admin API with one token. */
export class AdminApi {
  constructor(
    private readonly token: string,
    private readonly base = '/api/v1/admin',
  ) {}

  overview(): Promise<ApiResult<Overview>> {
    return this.call<Overview>('GET', '/overview');
  }

  /** Closes a room for everyone in it. */
  closeRoom(code: string): Promise<ApiResult<unknown>> {
    return this.call('DELETE', `/rooms/${encodeURIComponent(code)}`);
  }

  /** Removes a player from a room; it may not rejoin that room. */
  kick(code: string, player: string): Promise<ApiResult<unknown>> {
    return this.call('DELETE', `/rooms/${encodeURIComponent(code)}/players/${encodeURIComponent(player)}`);
  }

  bans(): Promise<ApiResult<BanList>> {
    return this.call<BanList>('GET', '/bans');
  }

  /** Bans a user id or network server-wide; the sessions it covers are ended at once. */
  ban(req: BanRequest): Promise<ApiResult<{ ban: AdminBan; sessionsEnded: number }>> {
    return this.call('POST', '/bans', req);
  }

  /** Lifts a ban by its id. */
  lift(id: string): Promise<ApiResult<unknown>> {
    return this.call('DELETE', `/bans?id=${encodeURIComponent(id)}`);
  }

  private async call<T>(method: string, path: string, request?: unknown): Promise<ApiResult<T>> {
    let resp: Response;
    try {
      const headers: Record<string, string> = { Authorization: `Bearer ${this.token}`, Accept: 'application/json' };
      if (request !== undefined) headers['Content-Type'] = 'application/json';
      resp = await fetch(this.base + path, {
        method,
        headers,
        cache: 'no-store',
        credentials: 'omit',
        ...(request === undefined ? {} : { body: JSON.stringify(request) }),
      });
    } catch (err) {
      return { ok: false, error: { status: 0, code: 'unreachable', message: err instanceof Error ? err.message : String(err) } };
    }
    let body: unknown = null;
    try {
      body = await resp.json();
    } catch {
      // A proxy's HTML error page, say: the status still says what happened.
    }
    if (resp.ok) return { ok: true, value: body as T };
    return { ok: false, error: { status: resp.status, ...errorOf(body, resp.status) } };
  }
}

function errorOf(body: unknown, status: number): { code: string; message: string } {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return {
    code: typeof e?.code === 'string' ? e.code : `http_${status}`,
    message: typeof e?.message === 'string' ? e.message : `HTTP ${status}`,
  };
}

/** What the sign-in form or the page says for a refusal. */
export function describeFailure(e: ApiFailure): string {
  switch (e.code) {
    case 'invalid_token':
      return 'That token is not valid.';
    case 'unauthenticated':
      return 'Enter the admin token.';
    case 'rate_limited':
      return 'Too many wrong tokens from your network. Wait a minute, then try again.';
    case 'not_found':
      return 'The admin page is off on this server: start hostrelay with -admin-token.';
    case 'unreachable':
      return 'Cannot reach the server. Check that it is running; we keep trying.';
    case 'room_not_found':
      return 'That room has closed already.';
    case 'player_not_found':
      return 'That player has left the room already.';
    case 'ban_not_found':
      return 'That ban has expired or been lifted already.';
    case 'too_many_bans':
      return 'The ban list is full (-bans-max). Lift some bans first.';
    default:
      return e.message || `HTTP ${e.status}`;
  }
}
