import { afterEach, describe, expect, it } from 'vitest';
import { WarmPeer } from './warm-peer';

/** Just what WarmPeer touches of an RTCPeerConnection. */
class FakePC {
  static made: FakePC[] = [];
  signalingState: RTCSignalingState = 'stable';
  localDescription: RTCSessionDescriptionInit | null = null;
  closed = false;
  constructor(public config: RTCConfiguration) {
    FakePC.made.push(this);
  }
  setConfiguration(c: RTCConfiguration): void {
    this.config = c;
  }
  close(): void {
    this.closed = true;
  }
}

const real = (globalThis as { RTCPeerConnection?: unknown }).RTCPeerConnection;
function useFake(): void {
  FakePC.made = [];
  (globalThis as { RTCPeerConnection?: unknown }).RTCPeerConnection = FakePC;
}
afterEach(() => {
  (globalThis as { RTCPeerConnection?: unknown }).RTCPeerConnection = real;
});

const config: RTCConfiguration = {
  iceServers: [{ urls: 'turn:127.0.0.1:3478?transport=udp', username: 'u', credential: 'c' }],
  iceTransportPolicy: 'relay',
  iceCandidatePoolSize: 1,
};

describe('WarmPeer', () => {
  it('is made relay-only with no server, and hands itself, configured, to the first create only', () => {
    useFake();
    const warm = new WarmPeer();
    expect(FakePC.made).toHaveLength(1);
    expect(FakePC.made[0]!.config).toEqual({ iceTransportPolicy: 'relay', iceCandidatePoolSize: 1 });
    const first = warm.create(config) as unknown as FakePC;
    expect(first).toBe(FakePC.made[0]);
    expect(first.config).toBe(config);
    const second = warm.create(config) as unknown as FakePC;
    expect(second).not.toBe(first);
    expect(FakePC.made).toHaveLength(2);
    warm.close();
    expect(first.closed).toBe(false); // taken: the room's to close
  });

  it('closes the connection nobody took', () => {
    useFake();
    const warm = new WarmPeer();
    warm.close();
    expect(FakePC.made[0]!.closed).toBe(true);
    expect((warm.create(config) as unknown as FakePC).config).toBe(config); // a fresh one
  });

  it('does without where there is no WebRTC', () => {
    delete (globalThis as { RTCPeerConnection?: unknown }).RTCPeerConnection;
    const warm = new WarmPeer();
    expect(() => warm.close()).not.toThrow();
  });
});
