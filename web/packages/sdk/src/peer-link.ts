import type { Signal } from '@hostrelay/protocol';
import { DEFAULT_MAX_BUFFERED_GAME, openChannels, type ChannelName } from './channels.js';
import { Emitter, type Unsubscribe } from './emitter.js';
import { LobbyError, PeerError, PeerErrorCode, type PeerErrorCodeName } from './errors.js';
import type { OutgoingSignal } from './lobby-client.js';
import { iceUfrag, selectedCandidatePair, type SelectedPair } from './stats.js';

/** What can go over a data channel. */
export type ChannelData = string | ArrayBuffer | ArrayBufferView<ArrayBuffer>;

export interface PeerLinkOptions {
  /**
   * The player id of the other end; '' when it is not known yet (a client
   * offering before its join's reply names the host): its signals wait
   * until bind() names it.
   */
  peerId: string;
  /** The joining client makes the offer; the host answers. */
  offerer: boolean;
  iceServers: RTCIceServer[];
  /** Sends a signal through the lobby to peerId. */
  signal: (signal: OutgoingSignal) => Promise<void>;
  /** Game packets are dropped while more than this many bytes are queued. */
  maxBufferedGame?: number;
  /**
   * Fail if the channels are not open this long after the link was made
   * (ms; default 20 s). The other end's failure (e.g. the host's TURN quota)
   * never reaches us, and ICE alone takes much longer to give up.
   */
  connectTimeoutMs?: number;
  /** Makes the RTCPeerConnection; tests plug in a fake. */
  createPeerConnection?: (config: RTCConfiguration) => RTCPeerConnection;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 20_000;

export interface PeerLinkEvents {
  /** Both channels are open. */
  open: [];
  /** The link is closed for good (it never reopens). */
  close: [];
  message: [data: ArrayBuffer | string, channel: ChannelName];
  error: [error: PeerError];
}

/** The `o=` line's session id: it stays the same across renegotiations of one RTCPeerConnection. */
export function sdpSessionId(sdp: string): string | null {
  return /^o=\S+ (\S+) /m.exec(sdp)?.[1] ?? null;
}

/** TURN error responses; 701 (server unreachable from one interface) is not one. */
const isTurnRefusal = (code: number): boolean => code >= 300 && code < 700;

function describeIceError(e: RTCPeerConnectionIceErrorEvent): string {
  const hint =
    e.errorCode === 486
      ? ' (allocation quota reached: too many open connections for this session)'
      : e.errorCode === 401
        ? ' (TURN credentials refused)'
        : '';
  return `TURN server ${e.url} refused an allocation: ${e.errorCode} ${e.errorText}${hint}`;
}

/**
 * One RTCPeerConnection between a client and its host, relay-only, with the
 * two negotiated channels. Incoming signals are applied one at a time in
 * arrival order; our candidates wait until our description has been sent.
 */
export class PeerLink {
  private peer: string;
  /** Signals made before bind(), in order. */
  private unbound: OutgoingSignal[] = [];
  private readonly pc: RTCPeerConnection;
  private readonly channels: Record<ChannelName, RTCDataChannel>;
  private readonly events = new Emitter<PeerLinkEvents>();
  private readonly offerer: boolean;
  private readonly signal: (s: OutgoingSignal) => Promise<void>;
  private readonly maxBufferedGame: number;
  private chain: Promise<void> = Promise.resolve();
  private described = false;
  private queued: OutgoingSignal[] = [];
  private relayCandidates = 0;
  private opened = false;
  private closed = false;
  private droppedPackets = 0;
  /** An ICE restart asked for while an offer was still unanswered: made once the answer is in. */
  private restartPending = false;
  private restarts = 0;
  private connectTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly connectTimeoutMs: number;
  private readonly firstDescription: Promise<void>;
  private markDescribed: () => void = () => undefined;

  constructor(options: PeerLinkOptions) {
    this.peer = options.peerId;
    this.offerer = options.offerer;
    this.signal = options.signal;
    this.maxBufferedGame = options.maxBufferedGame ?? DEFAULT_MAX_BUFFERED_GAME;
    const create = options.createPeerConnection ?? ((c: RTCConfiguration) => new RTCPeerConnection(c));
    // Relay only: game traffic never depends on NAT punch-through and no
    // player's address reaches another player.
    // A link made before its peer is known (peerId '') is made ahead of
    // need: a candidate pool starts the TURN allocation now rather than
    // when the description is set.
    this.firstDescription = new Promise((resolve) => (this.markDescribed = resolve));
    this.pc = create({
      iceServers: options.iceServers,
      iceTransportPolicy: 'relay',
      ...(options.peerId === '' ? { iceCandidatePoolSize: 1 } : {}),
    });
    this.channels = openChannels(this.pc);
    this.wire();
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    // A link made ahead of its peer waits for bind(): it may wait long.
    if (this.peer !== '') this.armConnectTimer();
  }

  private armConnectTimer(): void {
    const timeoutMs = this.connectTimeoutMs;
    this.connectTimer = setTimeout(() => {
      this.fail(PeerErrorCode.ConnectionFailed, `no connection to ${this.peerId} within ${timeoutMs / 1000} s`);
    }, timeoutMs);
  }

  on<K extends keyof PeerLinkEvents>(event: K, listener: (...args: PeerLinkEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  /** The player id of the other end ('' until bind() when made without one). */
  get peerId(): string {
    return this.peer;
  }

  /** True once closed, for good. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Names the other end of a link made with peerId '' and sends it what
   * was held: the offer made in the meantime and its candidates.
   */
  bind(peerId: string): void {
    if (this.peer !== '' || peerId === '') throw new Error(`PeerLink.bind: already bound to ${this.peer || '(none)'}`);
    this.peer = peerId;
    if (!this.closed) this.armConnectTimer();
    const held = this.unbound;
    this.unbound = [];
    for (const s of held) this.relay({ ...s, to: peerId });
  }

  /**
   * Resolves once this end's first description (the offer, or the answer)
   * has been set and handed to `signal` (for a link not bound yet: held
   * for bind(), which sends it at once), or the link closed.
   */
  whenDescribed(): Promise<void> {
    return this.firstDescription;
  }

  get isOpen(): boolean {
    return this.opened && !this.closed;
  }

  /** Game packets dropped because the channel's buffer was full. */
  get dropped(): number {
    return this.droppedPackets;
  }

  /** ICE restarts this end has offered (offerer) or answered (answerer). */
  get iceRestarts(): number {
    return this.restarts;
  }

  /** The offerer starts negotiation; the answerer waits for the offer. */
  start(): void {
    if (!this.offerer) return;
    this.enqueue(() => this.offer());
  }

  /**
   * Takes fresh TURN credentials. New allocations use them at once; the
   * offerer also restarts ICE, so the connection moves to allocations made
   * with them while the data channels stay up. The answerer only takes the
   * new configuration: the offerer's restart offer makes it gather again.
   */
  refreshIce(iceServers: RTCIceServer[]): void {
    if (this.closed) return;
    this.pc.setConfiguration({ ...this.pc.getConfiguration(), iceServers });
    if (!this.offerer) return;
    this.enqueue(async () => {
      // A restart offer made while our first offer is unanswered would
      // replace it; the answer handler makes it instead.
      if (this.pc.signalingState !== 'stable' || this.pc.remoteDescription === null) {
        this.restartPending = true;
        return;
      }
      await this.restartIce();
    });
  }

  /** True if an offer comes from the same RTCPeerConnection as the one we answered (a renegotiation). */
  isRenegotiation(sdp: string): boolean {
    const current = this.pc.remoteDescription?.sdp;
    if (this.offerer || this.closed || !current) return false;
    const id = sdpSessionId(sdp);
    return id !== null && id === sdpSessionId(current);
  }

  /** Applies a signal from the peer (offer, answer or candidate). */
  handleSignal(s: Signal): void {
    this.enqueue(() => this.apply(s));
  }

  /**
   * Sends on a channel; false if the channel is not open or, on "game", the
   * packet was dropped because too much is already queued.
   */
  send(data: ChannelData, channel: ChannelName = 'game'): boolean {
    const dc = this.channels[channel];
    if (this.closed || dc.readyState !== 'open') return false;
    if (channel === 'game' && dc.bufferedAmount > this.maxBufferedGame) {
      this.droppedPackets++;
      return false;
    }
    if (typeof data === 'string') dc.send(data);
    else if (data instanceof ArrayBuffer) dc.send(data);
    else dc.send(data);
    return true;
  }

  selectedCandidatePair(): Promise<SelectedPair | null> {
    return selectedCandidatePair(this.pc);
  }

  /** Our current ICE username fragment: it changes with each ICE restart. */
  get localUfrag(): string | null {
    return iceUfrag(this.pc.localDescription?.sdp);
  }

  /** Closes the connection and both channels. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.connectTimer);
    this.queued = [];
    this.unbound = [];
    for (const dc of Object.values(this.channels)) dc.close();
    this.pc.close();
    this.markDescribed();
    this.events.emit('close');
    this.events.clear();
  }

  private wire(): void {
    const pc = this.pc;
    pc.onicecandidate = (e) => {
      if (!e.candidate) {
        this.sendCandidate({ to: this.peerId, kind: 'candidate' }); // end of candidates
        return;
      }
      if (e.candidate.candidate === '') return;
      if (e.candidate.type === 'relay') this.relayCandidates++;
      this.sendCandidate({
        to: this.peerId,
        kind: 'candidate',
        cand: e.candidate.candidate,
        mid: e.candidate.sdpMid ?? '',
      });
    };
    pc.onicecandidateerror = (e) => {
      if (!isTurnRefusal(e.errorCode)) return;
      // Once open, a refusal can only come from an ICE restart, and the
      // connection keeps its working pair: report it, do not drop the game.
      if (this.opened) this.events.emit('error', new PeerError(PeerErrorCode.IceCandidateError, this.peerId, describeIceError(e)));
      else this.fail(PeerErrorCode.IceCandidateError, describeIceError(e));
    };
    pc.onicegatheringstatechange = () => {
      if (pc.iceGatheringState === 'complete' && this.relayCandidates === 0) {
        this.fail(PeerErrorCode.NoRelayCandidates, 'ICE gathering finished without a relay candidate: is the TURN server reachable?');
      }
    };
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'failed') this.fail(PeerErrorCode.ConnectionFailed, 'the peer connection failed');
      else if (pc.connectionState === 'closed') this.close();
    };
    for (const [name, dc] of Object.entries(this.channels) as [ChannelName, RTCDataChannel][]) {
      dc.onopen = () => this.checkOpen();
      dc.onclose = () => this.close();
      dc.onmessage = (e: MessageEvent<ArrayBuffer | string>) => this.events.emit('message', e.data, name);
    }
  }

  private checkOpen(): void {
    if (this.opened || this.closed) return;
    if (this.channels.game.readyState === 'open' && this.channels.events.readyState === 'open') {
      this.opened = true;
      clearTimeout(this.connectTimer);
      this.events.emit('open');
    }
  }

  private enqueue(step: () => Promise<void>): void {
    this.chain = this.chain
      .then(() => (this.closed ? undefined : step()))
      .catch((err: unknown) => {
        this.fail(PeerErrorCode.NegotiationFailed, `negotiation failed: ${err instanceof Error ? err.message : String(err)}`);
      });
  }

  private async apply(s: Signal): Promise<void> {
    switch (s.kind) {
      case 'offer': {
        if (this.offerer) return; // only the host answers
        const again = this.pc.remoteDescription !== null;
        await this.pc.setRemoteDescription({ type: 'offer', sdp: s.sdp });
        // Candidates of a renegotiation wait for its answer, as the first ones did.
        this.described = false;
        await this.pc.setLocalDescription(await this.pc.createAnswer());
        this.sendDescription('answer');
        if (again) this.restarts++;
        return;
      }
      case 'answer':
        if (!this.offerer) return;
        await this.pc.setRemoteDescription({ type: 'answer', sdp: s.sdp });
        if (this.restartPending) {
          this.restartPending = false;
          await this.restartIce();
        }
        return;
      case 'candidate':
        if (s.cand === '') {
          // End of candidates; browsers that reject the marker lose nothing.
          await this.pc.addIceCandidate().catch(() => undefined);
          return;
        }
        await this.pc.addIceCandidate(
          s.mid === '' ? { candidate: s.cand, sdpMLineIndex: 0 } : { candidate: s.cand, sdpMid: s.mid },
        );
        return;
    }
  }

  private async offer(): Promise<void> {
    this.described = false;
    await this.pc.setLocalDescription(await this.pc.createOffer());
    this.sendDescription('offer');
  }

  private async restartIce(): Promise<void> {
    // restartIce() alone would wait for negotiationneeded; we offer at once,
    // in our own queue, so signals keep their order.
    this.pc.restartIce();
    await this.offer();
    this.restarts++;
  }

  private sendDescription(kind: 'offer' | 'answer'): void {
    const sdp = this.pc.localDescription?.sdp ?? '';
    this.relay({ to: this.peerId, kind, sdp });
    this.described = true;
    this.markDescribed();
    const queued = this.queued;
    this.queued = [];
    for (const c of queued) this.relay(c);
  }

  private sendCandidate(c: OutgoingSignal): void {
    if (this.closed) return;
    if (this.described) this.relay(c);
    else this.queued.push(c);
  }

  private relay(s: OutgoingSignal): void {
    if (this.peer === '') {
      this.unbound.push(s);
      return;
    }
    this.signal(s).catch((err: unknown) => {
      // The peer may have left while we were still negotiating: the room's
      // playerLeft will close this link, that is no error.
      if (this.closed) return;
      if (err instanceof LobbyError && (err.code === 'peer_not_found' || err.code === 'not_in_room')) {
        this.close();
        return;
      }
      this.fail(PeerErrorCode.NegotiationFailed, `signal ${s.kind} failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  private fail(code: PeerErrorCodeName, message: string): void {
    if (this.closed) return;
    this.events.emit('error', new PeerError(code, this.peerId, message));
    this.close();
  }
}
