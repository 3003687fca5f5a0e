/**
 * The lobby WebSocket URL of a hostrelay server, from its address as a page
 * knows it: `http://host:port` → `ws://host:port/ws`, `https:` → `wss:`.
 * A `ws:`/`wss:` URL or one with a path is kept as given (the path
 * included); a relative one is resolved against `base` (the page).
 *
 * @example
 * const relay = new URLSearchParams(location.search).get('relay') || location.origin;
 * const lobby = await LobbyClient.connect(lobbyUrl(relay), name);
 */
export function lobbyUrl(relay: string | URL, base: string | URL | undefined = globalThis.location?.href): string {
  const url = new URL(relay, base);
  url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
  if (url.pathname === '/') url.pathname = '/ws';
  return url.href;
}

/**
 * A link that opens `page` (default: this page) and joins room `code`: the
 * page's URL with `?room=CODE` first, its other query parameters kept after
 * it (a `?relay=` the page was opened with carries on) and its #fragment dropped.
 * The page reads the code back with `new URLSearchParams(location.search).get('room')`.
 *
 * @example
 * linkInput.value = shareLink(session.room.code);
 */
export function shareLink(code: string, page: string | URL | undefined = globalThis.location?.href, param = 'room'): string {
  if (page === undefined) throw new TypeError('shareLink: no page URL (pass one outside a browser)');
  const url = new URL(page);
  url.hash = '';
  const rest = [...url.searchParams].filter(([k]) => k !== param);
  url.search = new URLSearchParams([[param, code], ...rest]).toString();
  return url.href;
}
