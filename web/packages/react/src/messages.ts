import type { ChannelName, RoomSession } from '@hostrelay/sdk';
import { useEffect, useRef } from 'react';
import { useRoomContext } from './room.js';

/**
 * Calls `handler` for every message a peer sends on `channel` ('game':
 * unordered, no retransmits; 'events': reliable, ordered) in the
 * RoomProvider's session (or `session`), while the component is mounted.
 * The handler may change on every render: the latest one is called, and
 * the subscription stays.
 *
 * @example
 * usePeerMessages('events', (peerId, data) => {
 *   if (typeof data === 'string') setLastPing(`${peerId}: ${data}`);
 * });
 */
export function usePeerMessages(
  channel: ChannelName,
  handler: (peerId: string, data: ArrayBuffer | string) => void,
  session?: RoomSession | null,
): void {
  const fromContext = useRoomContext().session;
  const room = session === undefined ? fromContext : session;
  const latest = useRef(handler);
  useEffect(() => {
    latest.current = handler;
  });
  useEffect(() => {
    if (room === null || room.closed) return undefined;
    return room.on('message', (peerId, data, on) => {
      if (on === channel) latest.current(peerId, data);
    });
  }, [room, channel]);
}
