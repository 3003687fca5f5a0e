// A scripted stand-in for RTCPeerConnection, enough for PeerLink.

type Handler<E> = ((e: E) => void) | null;

export class FakeChannel {
  readyState: RTCDataChannelState = 'connecting';
  bufferedAmount = 0;
  binaryType = 'blob';
  readonly sent: unknown[] = [];
  onopen: Handler<Event> = null;
  onclose: Handler<Event> = null;
  onmessage: Handler<MessageEvent> = null;

  constructor(
    readonly label: string,
    readonly init: RTCDataChannelInit,
  ) {}

  send(data: unknown): void {
    if (this.readyState !== 'open') throw new Error('channel not open');
    this.sent.push(data);
  }

  close(): void {
    this.readyState = 'closed';
  }

  open(): void {
    this.readyState = 'open';
    this.onopen?.(new Event('open'));
  }

  receive(data: ArrayBuffer | string): void {
    this.onmessage?.({ data } as MessageEvent);
  }
}

export class FakePeerConnection {
  readonly channels: FakeChannel[] = [];
  localDescription: RTCSessionDescriptionInit | null = null;
  remoteDescription: RTCSessionDescriptionInit | null = null;
  readonly added: (RTCIceCandidateInit | null)[] = [];
  closed = false;
  signalingState: RTCSignalingState = 'stable';
  /** restartIce() calls; each makes the next offer an ICE restart, as in a browser. */
  restartsAsked = 0;
  private restartNext = false;
  private offers = 0;
  readonly configurations: RTCConfiguration[] = [];
  /** When set, setLocalDescription completes only once it resolves (a browser busy elsewhere). */
  localGate: Promise<void> | null = null;
  iceGatheringState: RTCIceGatheringState = 'new';
  connectionState: RTCPeerConnectionState = 'new';
  onicecandidate: Handler<{ candidate: { candidate: string; sdpMid: string | null; type: string } | null }> = null;
  onicecandidateerror: Handler<{ errorCode: number; errorText: string; url: string }> = null;
  onicegatheringstatechange: Handler<Event> = null;
  onconnectionstatechange: Handler<Event> = null;

  constructor(public config: RTCConfiguration) {}

  getConfiguration(): RTCConfiguration {
    return this.config;
  }

  setConfiguration(c: RTCConfiguration): void {
    this.configurations.push(c);
    this.config = c;
  }

  restartIce(): void {
    this.restartsAsked++;
    this.restartNext = true;
  }

  createDataChannel(label: string, init: RTCDataChannelInit): FakeChannel {
    const ch = new FakeChannel(label, init);
    this.channels.push(ch);
    return ch;
  }

  /** The first offer is 'offer-sdp'; later ones say whether they restart ICE. */
  createOffer(): Promise<RTCSessionDescriptionInit> {
    const n = this.offers++;
    const sdp = n === 0 ? 'offer-sdp' : `offer-sdp ${n}${this.restartNext ? ' ice-restart' : ''}`;
    this.restartNext = false;
    return Promise.resolve({ type: 'offer', sdp });
  }

  createAnswer(): Promise<RTCSessionDescriptionInit> {
    return Promise.resolve({ type: 'answer', sdp: 'answer-sdp' });
  }

  setLocalDescription(d: RTCSessionDescriptionInit): Promise<void> {
    const set = (): void => {
      this.localDescription = d;
      this.signalingState = d.type === 'offer' ? 'have-local-offer' : 'stable';
    };
    if (this.localGate) return this.localGate.then(set);
    set();
    return Promise.resolve();
  }

  setRemoteDescription(d: RTCSessionDescriptionInit): Promise<void> {
    this.remoteDescription = d;
    this.signalingState = d.type === 'offer' ? 'have-remote-offer' : 'stable';
    return Promise.resolve();
  }

  addIceCandidate(c?: RTCIceCandidateInit): Promise<void> {
    if (!this.remoteDescription) return Promise.reject(new Error('no remote description'));
    this.added.push(c ?? null);
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
  }

  channel(label: string): FakeChannel {
    const ch = this.channels.find((c) => c.label === label);
    if (!ch) throw new Error(`no channel ${label}`);
    return ch;
  }

  openChannels(): void {
    for (const ch of this.channels) ch.open();
  }

  candidate(cand: string | null, type = 'relay'): void {
    this.onicecandidate?.({ candidate: cand === null ? null : { candidate: cand, sdpMid: '0', type } });
  }

  gatheringComplete(): void {
    this.iceGatheringState = 'complete';
    this.onicegatheringstatechange?.(new Event('icegatheringstatechange'));
  }

  iceError(errorCode: number, errorText: string): void {
    this.onicecandidateerror?.({ errorCode, errorText, url: 'turn:127.0.0.1:3478?transport=udp' });
  }
}

/** Collects every fake made, for RoomSessionOptions.createPeerConnection. */
export function fakePeerFactory(): { made: FakePeerConnection[]; create: (c: RTCConfiguration) => RTCPeerConnection } {
  const made: FakePeerConnection[] = [];
  return {
    made,
    create: (c) => {
      const pc = new FakePeerConnection(c);
      made.push(pc);
      return pc as unknown as RTCPeerConnection;
    },
  };
}
