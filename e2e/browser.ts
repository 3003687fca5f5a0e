import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium; the /usr/bin wrapper adds extensions and noise. */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/lib/chromium/chromium';

/**
 * Playwright's own --disable-features list plus WebRtcHideLocalIpsWithMdns
 * and WebUIOmniboxAimPopup.
 * Chromium honours only the last --disable-features flag, so ours must
 * repeat Playwright's list.
 */
const DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'WebRtcHideLocalIpsWithMdns',
  // Each new browser context built the omnibox's AI-mode popup, a WebUI
  // page in a renderer of its own: ≈ 400 ms of CPU a context, on the core
  // the test's pages need. Headless Chromium never shows it.
  'WebUIOmniboxAimPopup',
];

/** Flags that keep every packet on loopback: no DNS, mDNS, QUIC or background fetches. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  `--disable-features=${DISABLED_FEATURES.join(',')}`,
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launches headless Chromium with CHROMIUM_ARGS and `extraArgs` (e.g. a certificate to trust). */
export function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true });
}
