import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostRoom, joinByLink, useHarness } from './harness';
import { waitForState } from './page-state';

// A player whose network lets only TLS out (UDP and TCP 3478 blocked): the
// server serves HTTPS from a certificate made for this test and offers only
// TURN over TLS (-turn-offer tls), so the pages' only ICE server is a
// turns: URL. Two tabs must still open their data channels, relay/relay,
// through TURN over TLS. Chromium trusts the certificate by its public key
// (--ignore-certificate-errors-spki-list), for the page and for TURN alike.

const PACKETS = 50;
const API_KEY = 'turns-e2e-api-key-0123456789';

interface TestCert {
  dir: string;
  cert: string;
  key: string;
  pem: Buffer;
  /** base64 SHA-256 of the certificate's public key, as Chromium's SPKI list takes it. */
  spki: string;
}

/** A self-signed P-256 certificate for 127.0.0.1, valid for a day (openssl). */
function selfSigned(): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'hostrelay-turns-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1',
    ], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(`turns.test.ts makes its certificate with openssl, which failed (is it installed?): ${String(err)}`);
  }
  const pem = readFileSync(cert);
  const der = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return { dir, cert, key, pem, spki: createHash('sha256').update(der).digest('base64') };
}

const tls = selfSigned();
const h = useHarness('turns', {
  https: true,
  serverArgs: ['-tls-cert', tls.cert, '-tls-key', tls.key, '-turn-tls', '127.0.0.1:0', '-turn-offer', 'tls', '-api-keys', API_KEY],
  browserArgs: [`--ignore-certificate-errors-spki-list=${tls.spki}`],
});
afterAll(() => rmSync(tls.dir, { recursive: true, force: true }));

/** GETs a JSON document from the server over HTTPS, trusting only the test certificate. */
function getJSON<T>(path: string, headers: Record<string, string> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request(`${h.base}${path}`, { ca: tls.pem, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode} ${body}`));
        else resolve(JSON.parse(body) as T);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('TURN over TLS only', () => {
  it('two tabs whose only ICE server is turns: connect relay/relay and trade packets', async () => {
    expect(h.server.turnTls, 'the server logged no turn_tls address').toMatch(/^127\.0\.0\.1:\d+$/);

    const ada = await h.player('ada', { name: 'Ada' });
    const code = await hostRoom(ada, h.base, { name: 'TLS only' });
    expect(ada.url()).toMatch(/^https:\/\//);

    // What the server hands this session: one turns: URL, nothing else.
    const session = await ada.evaluate(() => window.hostrelayTest.session());
    const ice = await getJSON<{ iceServers: { urls: string[] }[] }>(`/api/v1/ice?session=${session}`, { 'X-API-Key': API_KEY });
    expect(ice.iceServers.flatMap((s) => s.urls)).toEqual([`turns:${h.server.turnTls}?transport=tcp`]);

    const bob = await h.player('bob', { name: 'Bob' });
    await joinByLink(bob, h.base, code);
    for (const p of [ada, bob]) await waitForState(p, () => window.hostrelay.openPeers.length === 1, null, 30_000);
    for (const p of [ada, bob]) {
      expect(await p.evaluate(() => window.hostrelayTest.selectedCandidatePairTypes())).toEqual([{ local: 'relay', remote: 'relay' }]);
    }

    // Packets both ways over the unreliable channel.
    expect(await ada.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
    expect(await bob.evaluate((n) => window.hostrelayTest.sendPackets(n), PACKETS)).toBe(PACKETS);
    await waitForState(bob, (n) => window.hostrelayTest.receivedCount() >= n, PACKETS);
    await waitForState(ada, (n) => window.hostrelayTest.receivedCount() >= n, PACKETS);

    // Each tab's relay is held over a TLS connection to TURN.
    const health = await getJSON<{ conns: { turnTLS: number; turnTCP: number }; turn: { allocations: number } }>('/healthz');
    console.log(`TURN over TLS: ${health.conns.turnTLS} TLS connections, ${health.turn.allocations} allocations`);
    expect(health.conns.turnTLS).toBeGreaterThanOrEqual(2);
    expect(health.conns.turnTCP).toBe(0);
    expect(health.turn.allocations).toBe(health.conns.turnTLS);
  });
});
