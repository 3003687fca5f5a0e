import type { ChatMessage, RoomInfo, RoomSummary } from '@hostrelay/sdk';
import type { LinkStatus } from './connection';
import type { RegionPick } from './region-picker';

// The app's observable state. It is also published on window.hostrelay so
// tests (and curious developers) can watch the page without scraping the DOM.

/** lobby: browse, create, type a code. name: the join page of a share link. watch: a spectator of a room. */
export type Phase = 'name' | 'lobby' | 'room' | 'error' | 'watch';

export interface PlayerView {
  id: string;
  name: string;
  host: boolean;
  ready: boolean;
  /** Round trip to the server in ms; 0 until measured. */
  ping: number;
  /** The player's connection dropped; the server holds its seat for a while. */
  away: boolean;
  /** The game's backend vouched for this player (an identity token); userId is its id for them. */
  verified: boolean;
  userId: string;
}

export interface HostrelayState {
  phase: Phase;
  /** The saved player name ('' until the player picks one). */
  name: string;
  connection: LinkStatus;
  /** When the next reconnect attempt is due (ms from when it was set), if one is scheduled. */
  retryInMs: number | null;
  /** Public rooms as the server lists them (lobby only). */
  rooms: RoomSummary[];
  roomsLoaded: boolean;
  /** The room a share link or code points at, before joining. */
  joinCode: string | null;
  /** The join page asks for the room's password. */
  needsPassword: boolean;
  role: 'host' | 'client' | null;
  roomCode: string | null;
  room: RoomInfo | null;
  you: string | null;
  players: PlayerView[];
  /** The host started the game. */
  started: boolean;
  chat: ChatMessage[];
  /** Player ids whose data channels are open. */
  openPeers: string[];
  /** The running game's round trip to the host (client only; null for the host or until measured). */
  rttMs: number | null;
  error: { code: string; message: string } | null;
  /** A message the room view shows above the room until the page leaves it (a host replaced for not answering). */
  notice: string | null;
  /** Game-channel packets received, of any kind. */
  packetsReceived: number;
  /** The room we watch as a spectator (phase watch), with the server's delay in ms. */
  watching: { code: string; name: string; mode: string; delayMs: number } | null;
  /** The lobby node we are connected to: its cluster id and region ('' on a single node). */
  node: { id: string; region: string };
  /** Where new rooms go in a cluster of several regions, once measured (the first create measures). */
  regionPick: RegionPick | null;
}

declare global {
  interface Window {
    hostrelay: HostrelayState;
  }
}

/** Most chat lines a page keeps; older ones scroll away. */
export const MAX_CHAT_LINES = 200;

export function initialState(phase: Phase, name: string): HostrelayState {
  return {
    phase,
    name,
    connection: 'connecting',
    retryInMs: null,
    rooms: [],
    roomsLoaded: false,
    joinCode: null,
    needsPassword: false,
    role: null,
    roomCode: null,
    room: null,
    you: null,
    players: [],
    started: false,
    chat: [],
    openPeers: [],
    rttMs: null,
    error: null,
    notice: null,
    packetsReceived: 0,
    watching: null,
    node: { id: '', region: '' },
    regionPick: null,
  };
}

/** Holds the state, publishes it on window and tells the view on every change. */
export class Store {
  private listeners: ((s: Readonly<HostrelayState>) => void)[] = [];

  constructor(private current: HostrelayState) {
    window.hostrelay = current;
  }

  get state(): Readonly<HostrelayState> {
    return this.current;
  }

  update(patch: Partial<HostrelayState>): void {
    this.current = { ...this.current, ...patch };
    window.hostrelay = this.current;
    for (const l of this.listeners) l(this.current);
  }

  subscribe(listener: (s: Readonly<HostrelayState>) => void): void {
    this.listeners.push(listener);
    listener(this.current);
  }
}
