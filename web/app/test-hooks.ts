// window.hostrelayTest: switches and counters for the end-to-end tests. In
// the e2e build only (vite build --mode e2e): main.ts installs it behind
// import.meta.env.MODE === 'e2e', so the production bundle has none of this
// file, test-traffic.ts or cuttable-transport.ts (make web checks it).
import type { PeerIceState, RoomSession, TransportFactory } from '@hostrelay/sdk';
import type { LobbyLink } from './connection';
import { CuttableTransport } from './cuttable-transport';
import { TestTraffic } from './test-traffic';

export interface HostrelayTestHooks {
  /** Sends n numbered packets on the game channel to every open peer; returns how many were accepted. */
  sendPackets(n: number): number;
  /** Numbered test packets received so far. */
  receivedCount(): number;
  /** The selected candidate pair's types for each peer connection. */
  selectedCandidatePairTypes(): Promise<{ local: string; remote: string }[]>;
  /** Ends the lobby session as if the server had lost it: the page reconnects with a new session. */
  dropConnection(): void;
  /**
   * Cuts the lobby connection as a network outage would (close code 4000,
   * not a clean leave) and refuses to reconnect for `ms`: the seat is held
   * and the page resumes it once the "network" is back.
   */
  cutConnection(ms: number): void;
  /** The lobby session id (the same after a resume, new after a fresh reconnect). */
  session(): string;
  /** TURN credential refreshes the room session has applied. */
  iceRefreshes(): number;
  /** Per peer connection: ICE restarts, the current ICE ufrag and the one of the pair in use (equal once a restart completed). */
  iceStates(): Promise<PeerIceState[]>;
  /** Peer connections whose channels opened in this room (a refresh must not add any). */
  peerOpens(): number;
}

declare global {
  interface Window {
    hostrelayTest: HostrelayTestHooks;
  }
}

/** What main.ts wires the hooks into. */
export interface TestHooks {
  /** The lobby socket to dial with: the SDK's WebSocket with an outage switch. */
  readonly transport: TransportFactory;
  /** Points the connection hooks at the page's lobby link. */
  useLink(link: LobbyLink): void;
  /** Points the room hooks at the room the page entered, or at nothing once it closed. */
  attach(session: RoomSession | null): void;
}

/** A room's share of the hooks: its test packets and its peer connections. */
interface Live {
  session: RoomSession;
  traffic: TestTraffic;
  peerOpens: number;
  off: () => void;
}

/**
 * Publishes window.hostrelayTest. Until a room session is attached the
 * packet hooks do nothing, and until the link is set the connection hooks.
 */
/**
 * Logs every peer connection's state changes to the console, numbered and
 * timed (ms since navigation start): the harness prints a page's console
 * when a test fails, so a link that never opens says where it stopped
 * (offer or answer never set, no relay candidate, ICE or DTLS stuck).
 */
function tracePeerConnections(): void {
  const Native = window.RTCPeerConnection;
  let next = 0;
  class Traced extends Native {
    constructor(config?: RTCConfiguration) {
      super(config);
      const id = ++next;
      const log = (what: string): void => console.debug(`[pc ${id}] ${performance.now().toFixed(0)} ms: ${what}`);
      log(`made (${config?.iceServers?.length ?? 0} ICE servers)`);
      this.addEventListener('signalingstatechange', () => log(`signaling ${this.signalingState}`));
      this.addEventListener('icegatheringstatechange', () => log(`gathering ${this.iceGatheringState}`));
      this.addEventListener('iceconnectionstatechange', () => log(`ice ${this.iceConnectionState}`));
      this.addEventListener('connectionstatechange', () => log(`connection ${this.connectionState}`));
      this.addEventListener('icecandidate', (e) => log(e.candidate ? `candidate ${e.candidate.type ?? '?'}` : 'candidates done'));
    }
  }
  window.RTCPeerConnection = Traced;
}

export function installTestHooks(): TestHooks {
  tracePeerConnections();
  const cuttable = new CuttableTransport();
  let link: LobbyLink | null = null;
  let live: Live | null = null;
  window.hostrelayTest = {
    sendPackets: (n) => live?.traffic.send(n) ?? 0,
    receivedCount: () => live?.traffic.testsReceived ?? 0,
    selectedCandidatePairTypes: async () =>
      live ? (await live.session.selectedCandidatePairs()).map(({ local, remote }) => ({ local, remote })) : [],
    iceRefreshes: () => live?.session.iceRefreshes ?? 0,
    iceStates: async () => (live ? live.session.iceStates() : []),
    peerOpens: () => live?.peerOpens ?? 0,
    dropConnection: () => link?.client?.close(),
    cutConnection: (ms) => cuttable.cut(ms),
    session: () => link?.session ?? '',
  };
  return {
    transport: cuttable.factory,
    useLink(l: LobbyLink): void {
      link = l;
    },
    attach(session: RoomSession | null): void {
      if (live) {
        live.off();
        live.traffic.stop();
        live = null;
      }
      if (!session) return;
      const room: Live = { session, traffic: new TestTraffic(session), peerOpens: 0, off: () => undefined };
      room.off = session.on('peerOpen', () => room.peerOpens++);
      live = room;
    },
  };
}
