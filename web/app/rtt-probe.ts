// Timing the round trip to a node without a lobby session: a STUN Binding to
// its TURN server (what the game's traffic will cross), or, where the
// browser gathers no server-reflexive candidate (a machine with only
// loopback, a network that blocks UDP), the opening of a WebSocket to it.

/** How long one probe waits before it counts the node as not answering (ms). */
export const PROBE_TIMEOUT_MS = 1000;

/** Whether a candidate is server-reflexive: what a STUN Binding answer makes. */
function isSrflx(c: RTCIceCandidate): boolean {
  return (c.type ?? /\btyp (\w+)/.exec(c.candidate)?.[1]) === 'srflx';
}

/**
 * Milliseconds from setLocalDescription to the first srflx candidate
 * gathered through `stunUrl`, or null if none comes within `timeoutMs`.
 * Nothing is ever sent to a peer: the offer is never used.
 */
export async function stunRtt(stunUrl: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<number | null> {
  let pc: RTCPeerConnection;
  try {
    pc = new RTCPeerConnection({ iceServers: [{ urls: stunUrl }] });
  } catch {
    return null;
  }
  try {
    pc.createDataChannel('rtt'); // an offer needs a section for ICE to gather on
    const offer = await pc.createOffer();
    return await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      const done = (rtt: number | null): void => {
        clearTimeout(timer);
        resolve(rtt);
      };
      let start = 0;
      pc.onicecandidate = (e) => {
        if (e.candidate === null) done(null); // gathering over without one
        else if (isSrflx(e.candidate)) done(performance.now() - start);
      };
      start = performance.now();
      pc.setLocalDescription(offer).catch(() => done(null));
    });
  } catch {
    return null;
  } finally {
    pc.close();
  }
}

/** Milliseconds to open a WebSocket to `url` (a TCP and an HTTP round trip), or null within `timeoutMs`. */
export function webSocketRtt(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<number | null> {
  return new Promise((resolve) => {
    let ws: WebSocket;
    const start = performance.now();
    try {
      ws = new WebSocket(url);
    } catch {
      resolve(null);
      return;
    }
    const done = (rtt: number | null): void => {
      clearTimeout(timer);
      ws.onopen = null;
      ws.onerror = null;
      ws.close(1000, 'rtt probe'); // before hello: the server holds nothing for it
      resolve(rtt);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    ws.onopen = () => done(performance.now() - start);
    ws.onerror = () => done(null);
  });
}
