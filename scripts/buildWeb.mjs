// Bundles the extension for VS Code in the browser (vscode.dev, github.dev, any web build) with
// esbuild into dist/web/, for the web-worker extension host, where there is no Node:
//   dist/web/extension.js       package.json's `browser` entry: the extension and the lab in one
//                               CommonJS bundle (`vscode` external; the host cannot load a second file)
//   dist/web/trainingWorker.js  the training worker, a classic script (the host starts nested
//   dist/web/modelWorker.js     workers from `blob:` URLs, which only take classic scripts)
// Every bundle is built for the browser platform, so a Node built-in reached from any of them
// (node:fs, node:path, worker_threads …) fails the build, naming the import. Run directly or import.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

const browser = {
  bundle: true,
  platform: 'browser',
  target: ['chrome114'],
  sourcemap: false,
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
  define: { VERSION: JSON.stringify(pkg.version) },
};

/** Builds the three web bundles; throws (with esbuild's message) when one of them reaches Node. */
export async function buildWeb() {
  await Promise.all([
    build({
      ...browser,
      entryPoints: ['src/extension/webExtension.ts'],
      outfile: 'dist/web/extension.js',
      format: 'cjs',
      external: ['vscode'],
    }),
    build({
      ...browser,
      entryPoints: ['src/lab/workers/trainingWorker.web.ts'],
      outfile: 'dist/web/trainingWorker.js',
      format: 'iife',
    }),
    build({
      ...browser,
      entryPoints: ['src/lab/workers/modelWorker.web.ts'],
      outfile: 'dist/web/modelWorker.js',
      format: 'iife',
    }),
  ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWeb();
