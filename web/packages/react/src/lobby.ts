import { LobbyClient, type LobbyClientOptions } from '@hostrelay/sdk';
import { createContext, createElement, useContext, useEffect, useMemo, type ReactNode } from 'react';
import { Resource, useResource } from './resource.js';

/**
 * Where the lobby connection stands: 'idle' (no URL yet), 'connecting'
 * (dialling and saying hello), 'open', 'reconnecting' (the connection
 * dropped and, with `resume`, the seat is being taken back), 'closed'
 * (over: `error` says why when it was not us).
 */
export type LobbyStatus = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** What useLobby returns; a new object whenever anything in it changes. */
export interface LobbyState {
  readonly status: LobbyStatus;
  /** The connected client while 'open' or 'reconnecting'; null otherwise. */
  readonly client: LobbyClient | null;
  /** Why the connection failed or closed (a LobbyError from the server or the SDK), or null. */
  readonly error: Error | null;
}

/**
 * Who the tab is in the lobby: a display name ('' to browse rooms first), an
 * identity token from the game's backend (docs/identity.md), or both.
 * `getToken` fetches a fresh token for the first hello and every resume.
 */
export interface LobbyIdentity {
  name?: string;
  token?: string;
  getToken?: () => Promise<string>;
}

/** LobbyClient's options, minus the identity (given as useLobby's second argument). */
export type UseLobbyOptions = Omit<LobbyClientOptions, 'token' | 'getToken'>;

const IDLE: LobbyState = { status: 'idle', client: null, error: null };
const CONNECTING: LobbyState = { status: 'connecting', client: null, error: null };

/** One lobby connection: opened by the first effect that retains it, closed after the last releases it. */
class LobbyStore extends Resource<LobbyState> {
  private generation = 0;
  private client: LobbyClient | null = null;
  private offs: (() => void)[] = [];
  private name: string;

  constructor(
    private readonly url: string,
    private readonly identity: LobbyIdentity,
    private readonly options: UseLobbyOptions,
  ) {
    super(CONNECTING);
    this.name = identity.name ?? '';
  }

  /** Takes a new display name: said to the server once connected (playerUpdated in a room). */
  rename(name: string): void {
    this.name = name;
    const client = this.client;
    if (client && client.connected && name.trim() !== '' && client.name !== name.trim()) {
      client.setName(name).catch((err: unknown) => {
        if (client === this.client) this.publish({ ...this.getSnapshot(), error: asError(err) });
      });
    }
  }

  protected open(): void {
    const generation = ++this.generation;
    this.publish(CONNECTING);
    const { token, getToken } = this.identity;
    const options: LobbyClientOptions = { ...this.options };
    if (token !== undefined) options.token = token;
    if (getToken !== undefined) options.getToken = getToken;
    LobbyClient.connect(this.url, this.name, options).then(
      (client) => {
        // Released while dialling: nobody wants this connection any more.
        if (generation !== this.generation) {
          client.close();
          return;
        }
        this.client = client;
        const state = (status: LobbyStatus, error: Error | null = null): void => this.publish({ status, client, error });
        this.offs = [
          client.on('reconnecting', () => state('reconnecting')),
          client.on('resumed', () => state('open')),
          // A move to another node keeps the client; its url and node changed.
          client.on('moved', () => state('open')),
          client.on('close', ({ error, code, reason }) => {
            this.client = null;
            this.publish({ status: 'closed', client: null, error: error ?? (code === 1000 ? null : new Error(`lobby connection closed (${code}${reason ? `: ${reason}` : ''})`)) });
          }),
        ];
        state('open');
        this.rename(this.name);
      },
      (err: unknown) => {
        if (generation === this.generation) this.publish({ status: 'closed', client: null, error: asError(err) });
      },
    );
  }

  protected close(): void {
    this.generation++;
    for (const off of this.offs.splice(0)) off();
    this.client?.close();
    this.client = null;
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * A lobby connection for this component's lifetime: opened after the first
 * render (never during it, and never on a server render, which shows
 * 'connecting'), closed when the component unmounts or `url` or the token
 * changes. StrictMode's second effect reuses the first one's connection.
 *
 * `url` is the relay's lobby WebSocket URL (lobbyUrl(origin) from
 * @hostrelay/sdk), or null to stay idle (say, until the player typed a
 * name). `who` is a name or a LobbyIdentity; a change of name alone is sent
 * as setName on the open connection rather than reconnecting. `options`
 * are read when the connection opens.
 *
 * @example
 * const lobby = useLobby(lobbyUrl(location.origin), name, { resume: true });
 * return <LobbyProvider value={lobby}><Rooms /></LobbyProvider>;
 */
export function useLobby(url: string | null, who: string | LobbyIdentity, options: UseLobbyOptions = {}): LobbyState {
  const identity: LobbyIdentity = typeof who === 'string' ? { name: who } : who;
  const token = identity.token ?? '';
  const store = useMemo(
    () => (url === null ? null : new LobbyStore(url, identity, options)),
    // A new connection for a new relay or token; a name change is a rename,
    // and options are read once, so an inline object does not reconnect.
    [url, token],
  );
  const state = useResource(store, IDLE, CONNECTING);
  const name = identity.name ?? '';
  useEffect(() => store?.rename(name), [store, name]);
  return state;
}

const LobbyContext = createContext<LobbyState>(IDLE);

/** Hands a useLobby state to the components below: useRoomDirectory and useRoom use it. */
export function LobbyProvider(props: { value: LobbyState; children?: ReactNode }): ReactNode {
  return createElement(LobbyContext.Provider, { value: props.value }, props.children);
}

/** The LobbyState of the nearest LobbyProvider ('idle' without one). */
export function useLobbyContext(): LobbyState {
  return useContext(LobbyContext);
}
