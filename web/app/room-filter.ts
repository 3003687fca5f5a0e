import type { RoomSummary } from '@hostrelay/sdk';

/** The rooms whose name (or host's name) contains the filter text, ignoring case and surrounding spaces. */
export function filterRooms(rooms: readonly RoomSummary[], filter: string): RoomSummary[] {
  const f = filter.trim().toLocaleLowerCase();
  if (!f) return [...rooms];
  return rooms.filter((r) => r.name.toLocaleLowerCase().includes(f) || r.host.toLocaleLowerCase().includes(f));
}
