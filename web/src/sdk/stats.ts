/** The candidate types (host, srflx, prflx, relay) of the pair ICE selected. */
export interface CandidatePairTypes {
  local: string;
  remote: string;
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
export async function selectedCandidatePair(pc: RTCPeerConnection): Promise<CandidatePairTypes | null> {
  const report = await pc.getStats();
  const byId = new Map<string, StatsEntry>();
  report.forEach((v: unknown) => {
    if (isEntry(v)) byId.set(v.id, v);
  });
  let pair: StatsEntry | undefined;
  for (const s of byId.values()) {
    if (s.type === 'transport' && typeof s['selectedCandidatePairId'] === 'string') {
      pair = byId.get(s['selectedCandidatePairId']);
    }
  }
  pair ??= [...byId.values()].find(
    (s) => s.type === 'candidate-pair' && s['state'] === 'succeeded' && s['nominated'] === true,
  );
  if (!pair) return null;
  const local = byId.get(String(pair['localCandidateId']));
  const remote = byId.get(String(pair['remoteCandidateId']));
  if (!local || !remote) return null;
  return { local: String(local['candidateType']), remote: String(remote['candidateType']) };
}
