/** The two data channels every peer connection has. */
export type ChannelName = 'game' | 'events';

/**
 * Both sides create the channels before the offer with fixed ids, so no
 * in-band negotiation is needed: "game" is unordered with no retransmits
 * (inputs and snapshots: late is useless), "events" is reliable and ordered.
 */
export const channelConfig: Readonly<Record<ChannelName, RTCDataChannelInit>> = {
  game: { negotiated: true, id: 0, ordered: false, maxRetransmits: 0 },
  events: { negotiated: true, id: 1, ordered: true },
};

/**
 * Above this many queued bytes a game packet is dropped rather than queued:
 * an unthrottled unreliable channel can stall with bufferedAmount stuck high,
 * and a stale snapshot is worth less than the next one.
 */
export const DEFAULT_MAX_BUFFERED_GAME = 64 * 1024;

export function openChannels(pc: RTCPeerConnection): Record<ChannelName, RTCDataChannel> {
  const game = pc.createDataChannel('game', channelConfig.game);
  const events = pc.createDataChannel('events', channelConfig.events);
  game.binaryType = 'arraybuffer';
  events.binaryType = 'arraybuffer';
  return { game, events };
}
