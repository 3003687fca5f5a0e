import type { HostrelayTestHooks } from './state';

type Live = Pick<HostrelayTestHooks, 'sendPackets' | 'receivedCount' | 'selectedCandidatePairTypes'>;

/**
 * Publishes window.hostrelayTest. Until a room session exists the packet
 * hooks do nothing; attach() points them at the live session.
 */
export function installTestHooks(
  pageStart: number,
  dropConnection: () => void,
): { hooks: HostrelayTestHooks; attach(live: Live | null): void } {
  let live: Live | null = null;
  const hooks: HostrelayTestHooks = {
    sendPackets: (n) => live?.sendPackets(n) ?? 0,
    receivedCount: () => live?.receivedCount() ?? 0,
    selectedCandidatePairTypes: async () => (live ? live.selectedCandidatePairTypes() : []),
    dropConnection,
    marks: { pageStart, joinStart: null, channelOpen: null },
  };
  window.hostrelayTest = hooks;
  return {
    hooks,
    attach(l: Live | null): void {
      live = l;
    },
  };
}
