// Moments in the page's life as User Timing marks ("hostrelay:join-start",
// …): the end-to-end tests and the browser benchmark read them with
// performance.getEntriesByName, and DevTools shows them on its timeline.

export type MarkName = 'page-start' | 'lobby-welcome' | 'join-start' | 'room-joined' | 'channel-open' | 'host-changed';

export function mark(name: MarkName): void {
  performance.mark(`hostrelay:${name}`);
}

/** Marks only the first time (the first data channel the page opened). */
export function markOnce(name: MarkName): void {
  if (performance.getEntriesByName(`hostrelay:${name}`, 'mark').length === 0) mark(name);
}
