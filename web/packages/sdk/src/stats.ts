/** The candidate types (host, srflx, prflx, relay) of the pair ICE selected. */
export interface CandidatePairTypes {
  local: string;
  remote: string;
}

/** The selected pair's types, and the ICE username fragment of its local candidate (new after an ICE restart). */
export interface SelectedPair extends CandidatePairTypes {
  localUfrag: string | null;
}

interface StatsEntry {
  id: string;
  type: string;
  [key: string]: unknown;
}

function isEntry(v: unknown): v is StatsEntry {
  return typeof v === 'object' && v !== null && typeof (v as StatsEntry).id === 'string';
}

/**
 * Reads the selected candidate pair from getStats(): the transport's
 * selectedCandidatePairId, or else a succeeded, nominated pair.
 */
export async function selectedCandidatePair(pc: RTCPeerConnection): Promise<SelectedPair | null> {
  const report = await pc.getStats();
  const byId = new Map<string, StatsEntry>();
  report.forEach((v: unknown) => {
    if (isEntry(v)) byId.set(v.id, v);
  });
  let pair: StatsEntry | undefined;
  let transportUfrag: string | null = null;
  for (const s of byId.values()) {
    if (s.type === 'transport' && typeof s['selectedCandidatePairId'] === 'string') {
      pair = byId.get(s['selectedCandidatePairId']);
      if (typeof s['iceLocalUsernameFragment'] === 'string') transportUfrag = s['iceLocalUsernameFragment'];
    }
  }
  pair ??= [...byId.values()].find(
    (s) => s.type === 'candidate-pair' && s['state'] === 'succeeded' && s['nominated'] === true,
  );
  if (!pair) return null;
  const local = byId.get(String(pair['localCandidateId']));
  const remote = byId.get(String(pair['remoteCandidateId']));
  if (!local || !remote) return null;
  const ufrag = typeof local['usernameFragment'] === 'string' ? local['usernameFragment'] : transportUfrag;
  return { local: String(local['candidateType']), remote: String(remote['candidateType']), localUfrag: ufrag };
}

/** The `a=ice-ufrag` of a description: each ICE restart picks a new one. */
export function iceUfrag(sdp: string | undefined): string | null {
  return sdp === undefined ? null : (/^a=ice-ufrag:(\S+)/m.exec(sdp)?.[1] ?? null);
}
