import {
  NetClient,
  NetHost,
  sessionTransport,
  type NetClientEvents,
  type NetClientOptions,
  type NetHostEvents,
  type NetHostOptions,
  type NetTransport,
} from '@hostrelay/netcode';
import type { RoomSession, Unsubscribe } from '@hostrelay/sdk';
import { useEffect, useMemo, useRef } from 'react';
import { Resource, useResource } from './resource.js';
import { useRoomContext } from './room.js';

/** Listeners for a NetHost's or NetClient's events, attached before it starts (so playerJoin for the host is heard). */
export type NetListeners<E extends { [K in keyof E]: unknown[] }> = { [K in keyof E]?: (...args: E[K]) => void };

/**
 * NetHost's options for useNetHost: the transport defaults to the room's
 * data channels (sessionTransport), and `on` subscribes before start().
 */
export type UseNetHostOptions<I, F extends string> = Omit<NetHostOptions<I, F>, 'transport'> & {
  transport?: NetTransport;
  on?: NetListeners<NetHostEvents<F>>;
};

/** NetClient's options for useNetClient, as UseNetHostOptions. */
export type UseNetClientOptions<I, F extends string> = Omit<NetClientOptions<I, F>, 'transport'> & {
  transport?: NetTransport;
  on?: NetListeners<NetClientEvents>;
};

interface Net {
  start(): void;
  stop(): void;
  on(event: never, listener: never): Unsubscribe;
}

/**
 * A NetHost or NetClient running over one session: made and started when
 * retained, stopped (and its transport disposed) when released.
 */
class NetStore<T extends Net, O extends { transport?: NetTransport; on?: object }> extends Resource<T | null> {
  private net: T | null = null;
  private transport: NetTransport | null = null;

  constructor(
    private readonly session: RoomSession,
    private readonly options: { readonly current: O },
    private readonly make: (options: O, transport: NetTransport) => T,
  ) {
    super(null);
  }

  protected open(): void {
    const given = this.options.current.transport;
    const transport = given ?? sessionTransport(this.session);
    if (given === undefined) this.transport = transport;
    const net = this.make(latest(this.options), transport);
    for (const event of Object.keys(this.options.current.on ?? {})) {
      const on = net.on as (event: string, listener: (...args: unknown[]) => void) => Unsubscribe;
      on.call(net, event, (...args) => {
        const listener = (this.options.current.on as Record<string, ((...a: unknown[]) => void) | undefined> | undefined)?.[event];
        listener?.(...args);
      });
    }
    net.start();
    this.net = net;
    this.publish(net);
  }

  protected close(): void {
    this.net?.stop();
    this.net = null;
    this.transport?.dispose?.();
    this.transport = null;
    this.publish(null);
  }
}

/**
 * The options with every function replaced by one that calls the latest
 * render's: step, capture, readInput and predict see the component's
 * current props without restarting the game.
 */
function latest<O extends object>(ref: { readonly current: O }): O {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(ref.current)) {
    out[key] =
      typeof value === 'function'
        ? (...args: unknown[]) => {
            const fn = (ref.current as Record<string, unknown>)[key];
            return typeof fn === 'function' ? (fn as (...a: unknown[]) => unknown)(...args) : undefined;
          }
        : value;
  }
  return out as O;
}

function useNet<T extends Net, O extends { transport?: NetTransport; on?: object }>(
  options: O,
  session: RoomSession | null | undefined,
  wantHost: boolean,
  make: (options: O, transport: NetTransport) => T,
): T | null {
  const room = useRoomContext();
  const s = session === undefined ? room.session : session;
  const isHost = session === undefined ? room.isHost : s?.role === 'host';
  const active = s !== null && !s.closed && isHost === wantHost;
  const ref = useRef(options);
  useEffect(() => {
    ref.current = options;
  });
  // A new host or client for a new session, or when this tab's role changes.
  const store = useMemo(() => (active && s !== null ? new NetStore(s, ref, make) : null), [active, s]);
  return useResource(store, null, null);
}

/**
 * A started NetHost while this tab hosts the room of the RoomProvider (or
 * `session`); null on a client, before the room and after it. Stopped on
 * unmount and when the tab stops being the host. Function options (step,
 * capture, readInput) always call the latest render's; the others are read
 * when the host starts.
 *
 * @example
 * const host = useNetHost({ game, step, capture, readInput, on: { playerJoin: (p) => spawn(p) } });
 */
export function useNetHost<I, F extends string>(options: UseNetHostOptions<I, F>, session?: RoomSession | null): NetHost<I, F> | null {
  return useNet(options, session, true, (o, transport) => new NetHost<I, F>({ ...o, transport }));
}

/**
 * A started NetClient while this tab is a client of the RoomProvider's
 * room (or `session`'s); null on the host. As useNetHost otherwise. Draw
 * from `client.frame()` in a requestAnimationFrame loop.
 */
export function useNetClient<I, F extends string>(options: UseNetClientOptions<I, F>, session?: RoomSession | null): NetClient<I, F> | null {
  return useNet(options, session, false, (o, transport) => new NetClient<I, F>({ ...o, transport }));
}
