/**
 * Entry of the TensorFlow.js comparison process (see benchTfjs.ts): measures tiny-decoder
 * training on tfjs's wasm backend and prints one JSON line, `{ backend, train }` or
 * `{ skipped }`. argv: wasmDir [warmup] [steps].
 *
 * Leaves out: everything else of the benchmark (bench.ts runs this as a child process).
 */

import { performance } from 'node:perf_hooks';
import { measureTfjsTraining } from './benchTfjs';

async function main(): Promise<void> {
  const [wasmDir, warmup, steps] = process.argv.slice(2);
  if (!wasmDir) throw new Error('usage: benchTfjs.js <tfjs-backend-wasm dist dir> [warmup] [steps]');
  const r = await measureTfjsTraining(wasmDir, Number(warmup ?? 2), Number(steps ?? 5), () => performance.now());
  process.stdout.write(`${JSON.stringify(typeof r === 'string' ? { skipped: r } : r)}\n`);
}

main().catch((e: unknown) => {
  process.stdout.write(
    `${JSON.stringify({ skipped: `tfjs failed: ${e instanceof Error ? e.message : String(e)}` })}\n`,
  );
  process.exitCode = 1;
});
