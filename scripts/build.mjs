// Bundles the CLI and the training worker with esbuild into dist/ (CommonJS, Node 20), then
// the dashboard. `npm run bench` imports buildCli to run `dist/cli.js bench`.
import { build } from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hasTfjs, metaUrlBanner, nodeBundle } from './esbuildCommon.mjs';
import { writeExportPython } from './exportPython.mjs';

/**
 * dist/cli.js, dist/worker.js, and the benchmark's two extra entries (src/bench/):
 * `attention-lab bench` measures the event loop next to a training worker (benchWorker) and,
 * where the dev-only TF.js packages are installed, TF.js's wasm backend (benchTfjs).
 */
export async function buildCli() {
  const common = { ...nodeBundle, banner: { js: metaUrlBanner } };
  const tfjs = hasTfjs();
  writeExportPython();
  await Promise.all([
    build({
      ...common,
      entryPoints: ['src/cli/bin.ts'],
      outfile: 'dist/cli.js',
      banner: { js: `#!/usr/bin/env node\n${common.banner.js}` },
    }),
    build({ ...common, entryPoints: ['src/lab/workers/trainingWorker.node.ts'], outfile: 'dist/worker.js' }),
    build({ ...common, entryPoints: ['src/bench/benchWorker.ts'], outfile: 'dist/benchWorker.js' }),
    ...(tfjs ? [build({ ...common, entryPoints: ['src/bench/benchTfjsMain.ts'], outfile: 'dist/benchTfjs.js' })] : []),
  ]);
  chmodSync('dist/cli.js', 0o755);
  copyTrainer();
}

/**
 * The PyTorch engine's trainer, the package python/attention_lab_trainer/ (its modules: the
 * pattern of src/lab/pytorch/trainerInputs.node.ts TRAINER_FILE), whole into
 * dist/pytorch/attention_lab_trainer/, beside the bundles that look for it there: the CLI, the
 * training worker and the extension (the .vsix ships it).
 */
export function copyTrainer() {
  const pkg = 'attention_lab_trainer';
  rmSync('dist/pytorch', { recursive: true, force: true });
  mkdirSync(`dist/pytorch/${pkg}`, { recursive: true });
  for (const f of readdirSync(`python/${pkg}`))
    if (/^\w+\.py$/.test(f)) copyFileSync(`python/${pkg}/${f}`, `dist/pytorch/${pkg}/${f}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildCli();
  // The dashboard bundle (dist/webview/), for the extension's webview and `attention-lab report`.
  await (await import('./buildWebview.mjs')).buildWebview();
}
