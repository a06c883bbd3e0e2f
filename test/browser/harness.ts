/**
 * Browser-test harness: launches Debian's Chromium through playwright-core (never a
 * downloaded browser; a fresh temporary profile per launch), serves the dashboard bundle
 * from a fake origin with page.route — so any other request is caught and refused — under the
 * CSP a VS Code webview uses, and plays the VS Code host: `acquireVsCodeApi()` records what
 * the page posts and persists its state, and `send` delivers host messages (typed arrays in
 * their tagged JSON form, revived by the page).
 *
 * In-page probes are JavaScript strings: the test project's TypeScript has no DOM library.
 * Leaves out: assertions (the *.test.ts files).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { encodeArrays } from '../../src/common/wireCodec';

/** Where Debian installs Chromium. */
export const CHROMIUM = '/usr/bin/chromium';
/** Whether the browser tests can run here. */
export const HAS_CHROMIUM = fs.existsSync(CHROMIUM);
/** Why they are skipped when they are. */
export const SKIP_REASON = `browser tests skipped: ${CHROMIUM} is missing (install it with \`apt-get install -y chromium\`)`;

export const ROOT = path.resolve(__dirname, '../..');
export const FIXTURES = path.join(ROOT, 'test/browser/fixtures');
export const SCREENSHOTS = path.join(ROOT, 'test/browser/screenshots');
const BUNDLE = path.join(ROOT, 'dist/webview');
const ORIGIN = 'https://dashboard.test';

/**
 * Launches headless Chromium with the flags that keep it offline and quiet; `extraArgs` adds more
 * (`--enable-unsafe-webgpu`: headless Linux Chromium offers a WebGPU adapter, SwiftShader's, only with it).
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

/** A fixture file, parsed (typed arrays stay in their tagged form until the page revives them). */
export function fixture<T = unknown>(name: string): T {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as T;
}

/** What a page saw. */
export interface PageLog {
  /** Messages the page posted to the host. */
  readonly posted: { type: string; [k: string]: unknown }[];
  /** Requests to anything but the bundle. */
  readonly blocked: string[];
  readonly errors: string[];
}

const NONCE = 'dGVzdC1ub25jZQ';

/** A theme as VS Code gives it to a webview: its body class and some of its variables. */
export type TestTheme = 'light' | 'dark' | 'high-contrast' | 'high-contrast-light';
/** The same themes under the name some suites use. */
export type ThemeName = TestTheme;

const BODY_CLASS: Record<TestTheme, string> = {
  light: 'vscode-light',
  dark: 'vscode-dark',
  'high-contrast': 'vscode-high-contrast',
  'high-contrast-light': 'vscode-high-contrast vscode-high-contrast-light',
};

/**
 * The variables VS Code 1.139 defines on a webview's <html> for its built-in themes Light
 * Modern, Dark Modern, Dark High Contrast and Light High Contrast (the editor's colours and
 * every chart colour: theme-defaults/themes/*.json over the workbench's registered defaults).
 * `charts.orange` defaults to the find-match highlight, #EA5C0055 (one-third opacity), in the
 * Modern themes, and to nothing in the high-contrast ones.
 */
export const THEME_VARS: Record<TestTheme, Record<string, string>> = {
  light: {
    '--vscode-editor-background': '#ffffff',
    '--vscode-editor-foreground': '#3b3b3b',
    '--vscode-descriptionForeground': '#3b3b3b',
    '--vscode-panel-border': '#e5e5e5',
    '--vscode-focusBorder': '#005fb8',
    '--vscode-charts-foreground': '#3b3b3b',
    '--vscode-charts-blue': '#0063d3',
    '--vscode-charts-red': '#e51400',
    '--vscode-charts-yellow': '#bf8803',
    '--vscode-charts-orange': '#ea5c0055',
    '--vscode-charts-green': '#388a34',
    '--vscode-charts-purple': '#652d90',
  },
  dark: {
    '--vscode-editor-background': '#1f1f1f',
    '--vscode-editor-foreground': '#cccccc',
    '--vscode-descriptionForeground': '#9d9d9d',
    '--vscode-panel-border': '#2b2b2b',
    '--vscode-focusBorder': '#0078d4',
    '--vscode-charts-foreground': '#cccccc',
    '--vscode-charts-blue': '#59a4f9',
    '--vscode-charts-red': '#f14c4c',
    '--vscode-charts-yellow': '#cca700',
    '--vscode-charts-orange': '#ea5c0055',
    '--vscode-charts-green': '#89d185',
    '--vscode-charts-purple': '#b180d7',
  },
  'high-contrast': {
    '--vscode-editor-background': '#000000',
    '--vscode-editor-foreground': '#ffffff',
    '--vscode-descriptionForeground': '#ffffff',
    '--vscode-panel-border': '#6fc3df',
    '--vscode-focusBorder': '#f38518',
    '--vscode-contrastBorder': '#6fc3df',
    '--vscode-charts-foreground': '#ffffff',
    '--vscode-charts-blue': '#59a4f9',
    '--vscode-charts-red': '#f48771',
    '--vscode-charts-yellow': '#ffd370',
    '--vscode-charts-green': '#89d185',
    '--vscode-charts-purple': '#b180d7',
  },
  'high-contrast-light': {
    '--vscode-editor-background': '#ffffff',
    '--vscode-editor-foreground': '#292929',
    '--vscode-descriptionForeground': '#292929',
    '--vscode-panel-border': '#0f4a85',
    '--vscode-focusBorder': '#006bbd',
    '--vscode-contrastBorder': '#0f4a85',
    '--vscode-charts-foreground': '#292929',
    '--vscode-charts-blue': '#0063d3',
    '--vscode-charts-red': '#b5200d',
    '--vscode-charts-yellow': '#895503',
    '--vscode-charts-green': '#374e06',
    '--vscode-charts-purple': '#652d90',
  },
};

function hostPage(initialState: unknown, theme: TestTheme): string {
  const vars = THEME_VARS[theme];
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${ORIGIN} 'nonce-${NONCE}'; script-src 'nonce-${NONCE}'; img-src data: blob:;">
<link rel="stylesheet" href="${ORIGIN}/dashboard.css" nonce="${NONCE}">
<script nonce="${NONCE}">
for (const [k, v] of Object.entries(${JSON.stringify(vars)})) document.documentElement.style.setProperty(k, v);
window.__posted = []; window.__csp = []; window.__savedState = ${JSON.stringify(initialState ?? null)};
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
window.acquireVsCodeApi = () => ({
  postMessage: (m) => { window.__posted.push(JSON.parse(JSON.stringify(m))); if (window.__toHost) window.__toHost(JSON.parse(JSON.stringify(m))); },
  getState: () => window.__savedState ?? undefined,
  setState: (s) => { window.__savedState = JSON.parse(JSON.stringify(s)); },
});
</script></head><body class="${BODY_CLASS[theme]}">
<main id="attention-lab-root"></main>
<script nonce="${NONCE}" src="${ORIGIN}/dashboard.js"></script></body></html>`;
}

/** Opens the dashboard as a VS Code webview would host it; `onPost` plays the host. */
export async function openDashboard(
  browser: Browser,
  opts: {
    theme?: TestTheme;
    state?: unknown;
    onPost?: (msg: { type: string; [k: string]: unknown }, page: Page) => void | Promise<void>;
    width?: number;
  } = {},
): Promise<{ page: Page; log: PageLog }> {
  const theme = opts.theme ?? 'light';
  const page = await browser.newPage({
    viewport: { width: opts.width ?? 1280, height: 900 },
    colorScheme: theme === 'light' || theme === 'high-contrast-light' ? 'light' : 'dark',
  });
  const log: PageLog = { posted: [], blocked: [], errors: [] };
  page.on('pageerror', (e) => log.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') log.errors.push(m.text());
  });
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === `${ORIGIN}/index.html`)
      return route.fulfill({ contentType: 'text/html', body: hostPage(opts.state, theme) });
    if (url === `${ORIGIN}/dashboard.js`)
      return route.fulfill({
        contentType: 'text/javascript',
        body: fs.readFileSync(path.join(BUNDLE, 'dashboard.js')),
      });
    if (url === `${ORIGIN}/dashboard.css`)
      return route.fulfill({ contentType: 'text/css', body: fs.readFileSync(path.join(BUNDLE, 'dashboard.css')) });
    log.blocked.push(url);
    return route.abort();
  });
  await page.exposeFunction('__toHost', async (msg: { type: string; [k: string]: unknown }) => {
    log.posted.push(msg);
    await opts.onPost?.(msg, page);
  });
  await page.goto(`${ORIGIN}/index.html`);
  await until(page, 'window.__posted.some((m) => m.type === "webview/ready")');
  return { page, log };
}

/**
 * Polls a JavaScript expression in the page until it is truthy (page.waitForFunction would
 * need eval, which the page's CSP forbids, as a webview's does).
 */
export async function until(page: Page, expression: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(`Boolean(${expression})`))) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${expression}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Delivers a host message to the page (typed arrays tagged; plain JSON passes as is). */
export async function send(page: Page, msg: unknown): Promise<void> {
  await page.evaluate(`window.postMessage(${JSON.stringify(encodeArrays(msg))}, '*')`);
  await frames(page);
}

/** Waits two animation frames (the dashboard paints on the next one). */
export async function frames(page: Page): Promise<void> {
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(undefined))))');
}

/** RGBA of one canvas pixel (canvas pixel coordinates). */
export async function pixel(
  page: Page,
  selector: string,
  x: number,
  y: number,
): Promise<[number, number, number, number]> {
  return page.evaluate(`(() => {
    const c = document.querySelector(${JSON.stringify(selector)});
    if (!(c instanceof HTMLCanvasElement)) throw new Error('no canvas at ' + ${JSON.stringify(selector)});
    return Array.from(c.getContext('2d').getImageData(${Math.floor(x)}, ${Math.floor(y)}, 1, 1).data);
  })()`) as Promise<[number, number, number, number]>;
}

/** RGBA at the centre of heatmap cell (t, s) of the canvas at `selector` (uses its data-cell-* attributes). */
export async function cellPixel(
  page: Page,
  selector: string,
  t: number,
  s: number,
): Promise<[number, number, number, number]> {
  const geo = (await page.evaluate(
    `(() => { const c = document.querySelector(${JSON.stringify(selector)}); return [Number(c.dataset.cellW), Number(c.dataset.cellH)]; })()`,
  )) as [number, number];
  return pixel(page, selector, (s + 0.5) * geo[0], (t + 0.5) * geo[1]);
}

/** Largest per-channel difference of two colours. */
export function colorDistance(a: readonly number[], b: readonly number[]): number {
  return Math.max(
    Math.abs((a[0] ?? 0) - (b[0] ?? 0)),
    Math.abs((a[1] ?? 0) - (b[1] ?? 0)),
    Math.abs((a[2] ?? 0) - (b[2] ?? 0)),
  );
}

/** Saves a screenshot (of the viewport, or the whole page) under test/browser/screenshots/. */
export async function screenshot(page: Page, name: string, fullPage = false): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}
