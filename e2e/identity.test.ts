import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, until, useHarness } from './harness';

// Identity tokens in the lobby app: a page opened with #token=… hellos with
// it, and the room shows a verified mark beside that player only.

const SECRET = 'e2e-identity-secret-of-at-least-32-bytes';
const h = useHarness('identity', { serverArgs: ['-auth', 'optional', '-auth-hs256-secret', SECRET] });

function token(sub: string): string {
  const b64 = (v: object): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = b64({ alg: 'HS256', typ: 'JWT' });
  const body = b64({ sub, exp: Math.floor(Date.now() / 1000) + 600 });
  return `${head}.${body}.${createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url')}`;
}

describe('verified players', () => {
  it('shows the verified mark beside a player whose page had a token', async () => {
    const host = await h.player('host', { name: 'Ada' });
    await host.goto(`${h.base}/#token=${token('user-ada')}`);
    await until(host, () => window.hostrelay?.connection === 'online', null);
    // The token left the address bar (it stays in this tab's sessionStorage).
    expect(new URL(host.url()).hash).toBe('');
    const code = await hostRoom(host, h.base, { name: 'Members', public: false });

    const guest = await h.player('guest', { name: 'Grace' });
    await joinByLink(guest, h.base, code);
    await until(host, () => window.hostrelay.players.length === 2, null);

    const players = await host.evaluate(() => window.hostrelay.players.map((p) => [p.name, p.verified, p.userId]));
    expect(players).toEqual([
      ['Ada', true, 'user-ada'],
      ['Grace', false, ''],
    ]);
    expect(await host.locator('#players li', { hasText: 'Ada' }).locator('.verified').count()).toBe(1);
    expect(await host.locator('#players li', { hasText: 'Grace' }).locator('.verified').count()).toBe(0);
    expect(await guest.locator('#players li', { hasText: 'Ada' }).locator('.verified').getAttribute('title')).toBe('Verified by the game');
  });
});
