/**
 * The HTML the dashboard panel loads: the bundled dashboard (dist/webview/dashboard.js and
 * .css) under a strict Content-Security-Policy — `default-src 'none'`, scripts only with
 * this page's nonce, styles and images only from the extension's own files (and `data:` /
 * `blob:` images the canvases export) — as VS Code's webview guide recommends. Pure: the
 * panel passes the webview's `cspSource` and resource URIs.
 *
 * Leaves out: the panel and its messages (dashboardManager.ts).
 */

import { bytesToBase64Btoa } from '../../common/wireCodec';

/** Inputs of the page. */
export interface DashboardPage {
  /** `webview.cspSource`. */
  readonly cspSource: string;
  readonly nonce: string;
  /** Webview URIs of the bundle. */
  readonly scriptUri: string;
  readonly styleUri: string;
  readonly title: string;
}

/** A fresh nonce (128 random bits, base64). */
export function makeNonce(): string {
  return bytesToBase64Btoa(crypto.getRandomValues(new Uint8Array(16)));
}

/** The Content-Security-Policy of the page. */
export function dashboardCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data: blob:`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The page's HTML. */
export function dashboardHtml(p: DashboardPage): string {
  const nonce = escapeAttr(p.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(dashboardCsp(p.cspSource, p.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeAttr(p.title)}</title>
<link rel="stylesheet" href="${escapeAttr(p.styleUri)}" nonce="${nonce}">
</head>
<body>
<main id="attention-lab-root"></main>
<script nonce="${nonce}" src="${escapeAttr(p.scriptUri)}"></script>
</body>
</html>
`;
}
