/** What a transport reports to the LobbyClient. */
export interface TransportHandlers {
  open(): void;
  message(data: ArrayBuffer | string): void;
  close(code: number, reason: string): void;
}

/** One lobby connection carrying binary frames. */
export interface Transport {
  send(frame: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** Opens a transport; the default is a browser WebSocket. Tests plug in a fake. */
export type TransportFactory = (url: string, handlers: TransportHandlers) => Transport;

export const webSocketTransport: TransportFactory = (url, handlers) => {
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => handlers.open();
  ws.onmessage = (ev: MessageEvent<ArrayBuffer | string>) => handlers.message(ev.data);
  // onerror is always followed by onclose, which carries the code.
  ws.onclose = (ev) => handlers.close(ev.code, ev.reason);
  return {
    send: (frame) => ws.send(frame),
    close: (code, reason) => ws.close(code, reason),
  };
};
