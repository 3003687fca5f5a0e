import type { HostrelayTestHooks } from './state';

type Live = Pick<HostrelayTestHooks, 'sendPackets' | 'receivedCount' | 'selectedCandidatePairTypes'>;

/**
 * Publishes window.hostrelayTest. Until a room session exists the hooks do
 * nothing; attach() points them at the live session.
 */
export function installTestHooks(pageStart: number): { hooks: HostrelayTestHooks; attach(live: Live): void } {
  let live: Live | null = null;
  const hooks: HostrelayTestHooks = {
    sendPackets: (n) => live?.sendPackets(n) ?? 0,
    receivedCount: () => live?.receivedCount() ?? 0,
    selectedCandidatePairTypes: async () => (live ? live.selectedCandidatePairTypes() : []),
    marks: { pageStart, joinStart: null, channelOpen: null },
  };
  window.hostrelayTest = hooks;
  return {
    hooks,
    attach(l: Live): void {
      live = l;
    },
  };
}
