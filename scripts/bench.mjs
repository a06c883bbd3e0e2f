// `npm run bench`: bundles the benchmark (src/lab/benchMain.ts), its training worker
// (benchWorker.ts) and, when @tensorflow/tfjs-core is installed, the TF.js comparison
// (benchTfjsMain.ts) into .tmp/bench/, then runs it with this script's arguments
// (e.g. --json, --quick, --configs tiny-decoder, --threads 1,2, --no-pytorch).
// The wasm kernels are built first by the prebench script.

import { build } from 'esbuild';
import { hasTfjs, metaUrlBanner, nodeBundle } from './esbuildCommon.mjs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, '.tmp/bench');
const tfjs = hasTfjs();
const entryPoints = { bench: join(root, 'src/lab/benchMain.ts'), benchWorker: join(root, 'src/lab/benchWorker.ts') };
if (tfjs) entryPoints.benchTfjs = join(root, 'src/lab/benchTfjsMain.ts');
await build({ ...nodeBundle, sourcemap: false, banner: { js: metaUrlBanner }, entryPoints, outdir });

const args = [join(outdir, 'bench.js'), '--worker', join(outdir, 'benchWorker.js')];
if (tfjs) args.push('--tfjs', join(outdir, 'benchTfjs.js'));
const r = spawnSync(process.execPath, [...args, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
