import { decodeFrame, encodeFrame, type Frame, type MessageMap, type MessageTypeName } from '@hostrelay/protocol';
import type { Transport, TransportFactory, TransportHandlers } from './transport.js';

/** A scripted lobby server on the other end of a fake transport. */
export class FakeServer {
  readonly received: Frame[] = [];
  handlers: TransportHandlers | null = null;
  closed = false;
  /** How the client closed each of its connections here. */
  readonly closes: { code: number | undefined; reason: string | undefined }[] = [];
  /** Called for every frame the client sends; reply from here. */
  onFrame: (frame: Frame) => void = () => undefined;

  readonly factory: TransportFactory = (_url, handlers) => {
    this.handlers = handlers;
    const transport: Transport = {
      send: (bytes) => {
        const frame = decodeFrame(bytes);
        this.received.push(frame);
        this.onFrame(frame);
      },
      close: (code, reason) => {
        this.closed = true;
        this.closes.push({ code, reason });
      },
    };
    return transport;
  };

  open(): void {
    this.handlers?.open();
  }

  send<T extends MessageTypeName>(t: T, id: number, body?: Partial<MessageMap[T]>): void {
    const bytes = encodeFrame(t, id, body);
    this.handlers?.message(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  }

  drop(code = 1006, reason = ''): void {
    this.handlers?.close(code, reason);
  }

  /** Opens at once and welcomes the hello. */
  static welcoming(): FakeServer {
    const s = new FakeServer();
    const factory = s.factory;
    (s as { factory: TransportFactory }).factory = (url, h) => {
      const t = factory(url, h);
      queueMicrotask(() => s.open());
      return t;
    };
    s.onFrame = (f) => {
      if (f.t === 'hello') s.send('welcome', f.id, { v: 1, session: 's_test', maxFrame: 16384 });
    };
    return s;
  }
}
