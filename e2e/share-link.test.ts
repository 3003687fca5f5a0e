import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { until, useHarness } from './harness';

// Share links are typed, pasted and mangled by anyone. A link whose path is
// not even a valid percent-encoding (/r/%C0%80 is an overlong UTF-8 form
// that decodeURIComponent refuses with URIError) must show the same friendly
// "Room not found" screen as a wrong code, with the page fully started (the
// lobby connection online, the way back working) and nothing thrown.
// With HOSTRELAY_SCREENSHOTS=dir the screen is saved there as a PNG.

const h = useHarness('share-link');
const dir = process.env['HOSTRELAY_SCREENSHOTS'];

describe('a malformed share link', () => {
  // Well-formed escapes of bytes that are not UTF-8: an overlong form, a lone byte, an encoded
  // surrogate. (A broken escape such as /r/% never reaches the page: Go's HTTP server answers 400.)
  for (const path of ['/r/%C0%80', '/r/%FF', '/r/%ED%A0%80', '/r/ABC%FF2345']) {
    it(`${path} says the room is not found, with no error in the page`, async () => {
      const eve = await h.player('eve', { name: 'Eve' });
      const problems: string[] = [];
      eve.on('pageerror', (e) => problems.push(`pageerror: ${e.name}: ${e.message}`));
      eve.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      await eve.goto(`${h.base}${path}`);
      await until(eve, () => window.hostrelay?.phase === 'error' && window.hostrelay.connection === 'online', null);
      expect(await eve.isVisible('#view-error')).toBe(true);
      expect(await eve.textContent('#error-title')).toBe('Room not found');
      expect(await eve.title()).toBe('Room not found · hostrelay');
      expect(await eve.isVisible('#home-link')).toBe(true);
      if (dir && path === '/r/%C0%80') {
        mkdirSync(dir, { recursive: true });
        await eve.screenshot({ path: `${dir}/share-link-malformed.png`, fullPage: true });
      }
      // The page started in full: the way back leads to a working lobby.
      await eve.click('#home-link');
      await until(eve, () => window.hostrelay?.phase === 'lobby' && window.hostrelay.connection === 'online', null);
      expect(problems).toEqual([]);
    });
  }
});
