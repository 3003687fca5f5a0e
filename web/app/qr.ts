import qrcode from 'qrcode-generator';

/**
 * A QR code of `text` as an SVG data URL, drawn by qrcode-generator. Medium
 * error correction survives a phone camera at an angle; the SVG scales
 * without blur. The colours are fixed dark-on-light: scanners expect that,
 * even on a dark page.
 */
export function qrDataUrl(text: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const svg = qr.createSvgTag({ cellSize: 4, margin: 2, scalable: true });
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
