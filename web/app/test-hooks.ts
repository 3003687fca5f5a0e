import type { HostrelayTestHooks } from './state';

type Live = Pick<HostrelayTestHooks, 'sendPackets' | 'receivedCount' | 'selectedCandidatePairTypes' | 'iceRefreshes' | 'iceStates' | 'peerOpens'>;

/** What the page's lobby link does for the hooks. */
export interface LinkHooks {
  dropConnection(): void;
  cutConnection(ms: number): void;
  session(): string;
}

/**
 * Publishes window.hostrelayTest. Until a room session exists the packet
 * hooks do nothing; attach() points them at the live session.
 */
export function installTestHooks(pageStart: number, link: LinkHooks): { hooks: HostrelayTestHooks; attach(live: Live | null): void } {
  let live: Live | null = null;
  const hooks: HostrelayTestHooks = {
    sendPackets: (n) => live?.sendPackets(n) ?? 0,
    receivedCount: () => live?.receivedCount() ?? 0,
    selectedCandidatePairTypes: async () => (live ? live.selectedCandidatePairTypes() : []),
    iceRefreshes: () => live?.iceRefreshes() ?? 0,
    iceStates: async () => (live ? live.iceStates() : []),
    peerOpens: () => live?.peerOpens() ?? 0,
    dropConnection: () => link.dropConnection(),
    cutConnection: (ms) => link.cutConnection(ms),
    session: () => link.session(),
    marks: { pageStart, joinStart: null, channelOpen: null, hostChanged: null },
  };
  window.hostrelayTest = hooks;
  return {
    hooks,
    attach(l: Live | null): void {
      live = l;
    },
  };
}
