import { describe, expect, it } from 'vitest';
import { lobbyUrl, shareLink } from './urls.js';

describe('lobbyUrl', () => {
  it('turns the relay address a page knows into its lobby WebSocket', () => {
    expect(lobbyUrl('http://localhost:8080')).toBe('ws://localhost:8080/ws');
    expect(lobbyUrl('https://relay.example.com')).toBe('wss://relay.example.com/ws');
    expect(lobbyUrl('https://relay.example.com/')).toBe('wss://relay.example.com/ws');
    expect(lobbyUrl('wss://relay.example.com/ws')).toBe('wss://relay.example.com/ws');
    expect(lobbyUrl('https://example.com/relay/ws')).toBe('wss://example.com/relay/ws');
  });

  it('resolves a relative address against the page', () => {
    expect(lobbyUrl('/', 'https://games.example.com/pong/?room=X')).toBe('wss://games.example.com/ws');
    expect(lobbyUrl(new URL('http://127.0.0.1:9000'))).toBe('ws://127.0.0.1:9000/ws');
  });
});

describe('shareLink', () => {
  it('is the page with ?room=CODE, the relay kept, the fragment dropped', () => {
    expect(shareLink('ABC2345', 'https://games.example.com/pong/#x')).toBe('https://games.example.com/pong/?room=ABC2345');
    expect(shareLink('ABC2345', 'http://127.0.0.1:5173/?relay=http%3A%2F%2F127.0.0.1%3A8080')).toBe(
      'http://127.0.0.1:5173/?room=ABC2345&relay=http%3A%2F%2F127.0.0.1%3A8080',
    );
  });

  it('replaces the code of the link the page was opened from', () => {
    expect(shareLink('NEW2345', 'https://g.example/?relay=x&room=OLD2345')).toBe('https://g.example/?room=NEW2345&relay=x');
    expect(shareLink('NEW2345', 'https://g.example/', 'game')).toBe('https://g.example/?game=NEW2345');
  });

  it('needs a page outside a browser', () => {
    expect(() => shareLink('ABC2345', undefined)).toThrow(/no page URL/);
  });
});
