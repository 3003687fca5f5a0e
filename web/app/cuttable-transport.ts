import { webSocketTransport, type Transport, type TransportFactory } from '@hostrelay/sdk';

/**
 * The page's WebSocket transport with an outage switch for tests: cut()
 * closes the live socket as a network failure would (code 4000, so the
 * server holds the seat) and fails every dial until the time is up.
 * In the e2e build only (test-hooks.ts).
 */
export class CuttableTransport {
  private downUntil = 0;
  private live: Transport | null = null;

  readonly factory: TransportFactory = (url, handlers) => {
    if (performance.now() < this.downUntil) {
      // Unreachable, as a dial during an outage is: closed before it opened.
      setTimeout(() => handlers.close(1006, 'network down'), 0);
      return { send: () => undefined, close: () => undefined };
    }
    const t = webSocketTransport(url, handlers);
    this.live = t;
    return t;
  };

  cut(ms: number): void {
    this.downUntil = performance.now() + ms;
    this.live?.close(4000, 'network cut');
    this.live = null;
  }
}
