import { Emitter, LobbyClient, LobbyError, backoff, type ReconnectPolicy, type TransportFactory, type Unsubscribe } from '@hostrelay/sdk';

/** What the page shows about the lobby connection. */
export type LinkStatus = 'connecting' | 'online' | 'reconnecting' | 'refused';

export interface LinkEvents {
  status: [status: LinkStatus, retryInMs: number | null];
  /** A new connection is up (the first, or after a drop). */
  connected: [client: LobbyClient];
  /**
   * The server refused our hello for good: a ban (code 'banned'). The link
   * stops dialling: every try would be refused the same way until the ban
   * is lifted, and a reload tries again.
   */
  refused: [code: string, message: string];
}

export interface LobbyLinkOptions {
  device: string;
  policy?: ReconnectPolicy;
  /** The lobby socket (default: the SDK's WebSocket; the e2e build's can be cut). */
  transport?: TransportFactory;
  /** An identity token from the game's backend for every new session's hello ('' or absent: none). */
  token?: string;
}

/**
 * Keeps one lobby connection open. A dropped connection first tries to take
 * its seat back (LobbyClient's resume: same session, rooms and games carry
 * on); if the server no longer holds it, the link dials a new session on the
 * policy's schedule, and whoever was in a room must join again (the
 * 'connected' event says when).
 */
export class LobbyLink {
  private readonly events = new Emitter<LinkEvents>();
  private readonly policy: ReconnectPolicy;
  private current: LobbyClient | null = null;
  private name: string;
  private attempt = 0;
  private timer: number | null = null;
  private offs: Unsubscribe[] = [];
  private state: LinkStatus = 'connecting';

  constructor(
    private readonly url: string,
    name: string,
    private readonly options: LobbyLinkOptions,
  ) {
    this.name = name;
    this.policy = options.policy ?? backoff({ initialMs: 500, maxMs: 8_000 });
  }

  get client(): LobbyClient | null {
    return this.current?.connected ? this.current : null;
  }

  get status(): LinkStatus {
    return this.state;
  }

  on<K extends keyof LinkEvents>(event: K, listener: (...args: LinkEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  start(): void {
    void this.dial();
  }

  /** The name to say hello with on the next connection (setName changes the live one). */
  setName(name: string): void {
    this.name = name;
  }

  /** Dials now instead of waiting for the next retry. */
  retryNow(): void {
    if (this.current?.connected || this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    void this.dial();
  }

  /** The current lobby session id, '' before the first connection. */
  get session(): string {
    return this.current?.session ?? '';
  }

  private setStatus(status: LinkStatus, retryInMs: number | null): void {
    this.state = status;
    this.events.emit('status', status, retryInMs);
  }

  private async dial(): Promise<void> {
    this.setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting', null);
    let client: LobbyClient;
    try {
      client = await LobbyClient.connect(this.url, this.name, {
        device: this.options.device,
        token: this.options.token || undefined,
        pings: true,
        resume: true,
        transport: this.options.transport,
      });
    } catch (err) {
      if (err instanceof LobbyError && err.code === 'banned') {
        this.setStatus('refused', null);
        this.events.emit('refused', err.code, err.message);
        return;
      }
      this.scheduleRetry();
      return;
    }
    this.attempt = 0;
    this.current = client;
    for (const off of this.offs) off();
    this.offs = [
      client.on('close', () => this.scheduleRetry()),
      client.on('reconnecting', () => this.setStatus('reconnecting', null)),
      client.on('resumed', () => this.setStatus('online', null)),
    ];
    this.setStatus('online', null);
    this.events.emit('connected', client);
  }

  private scheduleRetry(): void {
    this.attempt++;
    const delay = this.policy.nextRetryDelayMs(this.attempt);
    if (delay === null) {
      this.setStatus('reconnecting', null);
      return;
    }
    this.setStatus('reconnecting', delay);
    this.timer = window.setTimeout(() => {
      this.timer = null;
      void this.dial();
    }, delay);
  }
}
