// Bundles the dashboard (webview/main.ts and the CSS it imports, uPlot's included) with
// esbuild into dist/webview/dashboard.js + dashboard.css: one IIFE for browsers (Chromium
// of VS Code's webviews and of the report page), no external imports, no eval, so it runs
// under a CSP that allows only nonce'd scripts. Run directly or from scripts/build.mjs.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/** Builds the dashboard bundle; `minify` for releases (the default keeps it readable). */
export async function buildWebview({ minify = false } = {}) {
  await build({
    entryPoints: { dashboard: 'webview/main.ts' },
    outdir: 'dist/webview',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: ['chrome114'],
    minify,
    sourcemap: false,
    legalComments: 'eof',
    logLevel: 'warning',
    tsconfig: 'webview/tsconfig.json',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  await buildWebview({ minify: process.argv.includes('--minify') });
