// `npm run bench:web`: training tokens/s of the web training worker in headless Chromium (one
// thread; two in a cross-origin isolated page) beside Node's training worker (one thread, two)
// on the same run (src/bench/benchWeb.ts). Builds the CLI's bundles (dist/worker.js) and the
// web bundles (dist/web/), bundles the page that plays VS Code's web extension host
// (src/bench/webTrainPage.ts → dist/benchWebPage.js) and the benchmark (dist/benchWeb.js), then
// runs it with this script's arguments: [--task reverse] [--steps 500] [--rounds 1] [--json]
// [--chromium PATH]. The wasm kernels are built first by the prebench:web script.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli } from './build.mjs';
import { buildWeb } from './buildWeb.mjs';
import { metaUrlBanner, nodeBundle } from './esbuildCommon.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
await Promise.all([
  buildCli(),
  buildWeb(),
  build({
    entryPoints: ['src/bench/webTrainPage.ts'],
    outfile: 'dist/benchWebPage.js',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: ['chrome114'],
    logLevel: 'warning',
  }),
  build({
    ...nodeBundle,
    banner: { js: metaUrlBanner },
    entryPoints: ['src/bench/benchWebMain.ts'],
    outfile: 'dist/benchWeb.js',
    external: ['playwright-core'],
  }),
]);
const args = [
  '--node-worker',
  join(root, 'dist/worker.js'),
  '--web-worker',
  'dist/web/trainingWorker.js',
  '--page',
  'dist/benchWebPage.js',
  ...process.argv.slice(2),
];
const r = spawnSync(process.execPath, [join(root, 'dist/benchWeb.js'), ...args], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
