import type { Frame } from '@hostrelay/protocol';
import { FakeServer } from './fake-transport.test-util.js';
import type { TransportFactory } from './transport.js';

/** One scripted node: welcomes with its id, region and resume tokens; `answer` replies to everything else. */
export interface FakeNode {
  readonly url: string;
  readonly id: string;
  readonly server: FakeServer;
  /** Hellos this node got, in order. */
  readonly hellos: Frame[];
  answer: (frame: Frame, node: FakeNode) => void;
}

/**
 * Several lobby nodes behind one transport factory, chosen by URL as a
 * browser's WebSocket would; a URL no node has fails like a refused
 * connection.
 */
export class FakeCluster {
  private readonly nodes = new Map<string, FakeNode>();
  private readonly down = new Set<string>();
  /** Every URL the client dialled, in order. */
  readonly dials: string[] = [];

  readonly factory: TransportFactory = (url, handlers) => {
    this.dials.push(url);
    const node = this.down.has(url) ? undefined : this.nodes.get(url);
    if (node) return node.server.factory(url, handlers);
    queueMicrotask(() => handlers.close(1006, ''));
    return { send: () => undefined, close: () => undefined };
  };

  /** Stops a node: its connection drops and nobody reaches it until start. */
  stop(node: FakeNode): void {
    this.down.add(node.url);
    node.server.drop(1006);
  }

  start(node: FakeNode): void {
    this.down.delete(node.url);
  }

  node(id: string, region: string, answer: FakeNode['answer'] = () => undefined): FakeNode {
    const url = `ws://${id}.test/ws`;
    const server = FakeServer.welcoming();
    const node: FakeNode = { url, id, server, hellos: [], answer };
    let tokens = 0;
    server.onFrame = (f) => {
      if (f.t !== 'hello') return node.answer(f, node);
      node.hellos.push(f);
      const resumed = (f.b?.resume ?? '') !== '';
      server.send('welcome', f.id, {
        v: 1,
        session: `s_${id}`,
        maxFrame: 16384,
        resume: `${id}-r${++tokens}`,
        grace: 20,
        resumed,
        node: id,
        region,
      });
    };
    this.nodes.set(url, node);
    return node;
  }
}
