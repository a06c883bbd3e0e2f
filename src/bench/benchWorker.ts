/**
 * Entry of the worker thread the benchmark trains in while it measures the main thread's
 * event-loop delay — the situation of the extension host while a run trains in its worker.
 * It trains one config on the WebAssembly backend (with `helpers` helper threads of its own)
 * for about `seconds`, posting `started` when the timed part begins and `done` with its
 * tokens/s at the end.
 *
 * Leaves out: the measurement itself (bench.ts, on the main thread).
 */

import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import type { Backend } from '../engine/backend';
import { createReferenceBackend } from '../engine/backends/reference';
import { createWasmBackend } from '../engine/backends/wasm/wasmBackend';
import { Rng } from '../engine/rng';
import type { BenchConfigName } from './benchConfigs';
import { benchConfig, randomBatch } from './benchConfigs';
import { benchTrainer } from './benchRun';
import { createWasmThreads } from '../lab/platform/threads.node';
import { enableWasmRelaxedSimd } from '../lab/platform/wasmFlags.node';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

/** What the benchmark passes to this worker. */
export interface BenchWorkerData {
  readonly config: BenchConfigName;
  readonly helpers: number;
  readonly seconds: number;
}

/** Messages this worker posts. */
export type BenchWorkerMessage =
  | { readonly type: 'started' }
  | { readonly type: 'done'; readonly steps: number; readonly tokensPerS: number }
  | { readonly type: 'failed'; readonly message: string };

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('benchWorker must run in a worker thread');
  const data = workerData as BenchWorkerData;
  const threads = data.helpers > 0 ? createWasmThreads(data.helpers) : null;
  const wasm = createWasmBackend({ runner: threads });
  const backend: Backend = wasm ?? createReferenceBackend();
  try {
    if (threads && wasm) await threads.whenReady();
    const cfg = benchConfig(data.config);
    const trainer = benchTrainer(cfg, backend);
    const batch = randomBatch(cfg, new Rng(3));
    trainer.step(batch); // warm-up, untimed
    trainer.step(batch);
    port.postMessage({ type: 'started' } satisfies BenchWorkerMessage);
    const t0 = performance.now();
    let steps = 0;
    let tokens = 0;
    while (performance.now() - t0 < data.seconds * 1000) {
      tokens += trainer.step(batch).tokens;
      steps++;
    }
    const tokensPerS = tokens / ((performance.now() - t0) / 1000);
    port.postMessage({ type: 'done', steps, tokensPerS } satisfies BenchWorkerMessage);
  } catch (e) {
    port.postMessage({
      type: 'failed',
      message: e instanceof Error ? e.message : String(e),
    } satisfies BenchWorkerMessage);
  } finally {
    wasm?.dispose();
  }
}

void main();
