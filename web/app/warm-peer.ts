/**
 * A peer connection made as a share link opens, before the lobby's welcome
 * brings the TURN credentials, for the join's early offer to take. A page's
 * first RTCPeerConnection costs the most: WebRTC's threads start, the
 * network list is read, a DTLS certificate is made. Done here, that work
 * overlaps the lobby's handshake instead of standing between the
 * credentials and the first relay candidate, which the channel's opening
 * waits for. It holds no TURN allocation: it has no ICE servers until
 * taken.
 */
export class WarmPeer {
  private pc: RTCPeerConnection | null = null;

  constructor() {
    try {
      // A candidate pool makes it read the network list now; with no server and relay only, it gathers nothing.
      this.pc = new RTCPeerConnection({ iceTransportPolicy: 'relay', iceCandidatePoolSize: 1 });
    } catch {
      this.pc = null; // no WebRTC here: the join reports that itself
    }
  }

  /**
   * For RoomSessionOptions.createPeerConnection: the warm connection, the
   * first time, with `config` applied (allowed until a description is
   * set; its new ICE servers start the pool's gathering at once); a new
   * connection every other time.
   */
  readonly create = (config: RTCConfiguration): RTCPeerConnection => {
    const pc = this.pc;
    this.pc = null;
    if (pc !== null && pc.signalingState === 'stable' && pc.localDescription === null) {
      try {
        pc.setConfiguration(config);
        return pc;
      } catch {
        pc.close();
      }
    }
    return new RTCPeerConnection(config);
  };

  /** Closes the warm connection if nobody took it. */
  close(): void {
    this.pc?.close();
    this.pc = null;
  }
}
