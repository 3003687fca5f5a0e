// The app's observable state. It is also published on window.hostrelay so
// tests (and curious developers) can watch the page without scraping the DOM.

export type Phase = 'name' | 'lobby' | 'room' | 'error';

export interface PlayerView {
  id: string;
  name: string;
  host: boolean;
}

export interface HostrelayState {
  phase: Phase;
  role: 'host' | 'client' | null;
  roomCode: string | null;
  you: string | null;
  players: PlayerView[];
  /** Player ids whose data channels are open. */
  openPeers: string[];
  /** Median round trip of the last pointer packets (client only). */
  rttMs: number | null;
  error: { code: string; message: string } | null;
  /** Game-channel packets received, of any kind. */
  packetsReceived: number;
}

export interface HostrelayMarks {
  /** performance.now() when this page's script started. */
  pageStart: number;
  /** When the user asked to create or join. */
  joinStart: number | null;
  /** When the first data channel to a peer opened. */
  channelOpen: number | null;
}

export interface HostrelayTestHooks {
  /** Sends n numbered packets on the game channel to every open peer; returns how many were accepted. */
  sendPackets(n: number): number;
  /** Numbered test packets received so far. */
  receivedCount(): number;
  /** The selected candidate pair's types for each peer connection. */
  selectedCandidatePairTypes(): Promise<{ local: string; remote: string }[]>;
  marks: HostrelayMarks;
}

declare global {
  interface Window {
    hostrelay: HostrelayState;
    hostrelayTest: HostrelayTestHooks;
  }
}

export function initialState(phase: Phase): HostrelayState {
  return {
    phase,
    role: null,
    roomCode: null,
    you: null,
    players: [],
    openPeers: [],
    rttMs: null,
    error: null,
    packetsReceived: 0,
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
