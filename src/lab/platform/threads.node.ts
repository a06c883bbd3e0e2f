/**
 * Node's helper threads for the WebAssembly backend (the `ParallelRunner` of
 * src/engine/backends/wasm/parallel.ts): `worker_threads` workers that instantiate the
 * backend's module on its shared memory and serve kernel jobs through the control block.
 * They are woken with Atomics.wait/notify on that memory, not postMessage: a message per
 * kernel would cost more than most kernels take.
 *
 * The worker's code is a short CommonJS script evaluated in the worker (`eval: true`), so
 * it survives bundling (the CLI and the extension are esbuild bundles) without a separate
 * entry file. Once a helper reports ready it is unref'ed, so an idle helper never keeps the
 * process alive (it sleeps in bounded waits, so exit can terminate it), and `dispose()`
 * (which the backend calls from its own dispose) stops them.
 *
 * Leaves out: deciding which kernels go parallel (the backend, by size).
 */

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ParallelRunner } from '../../engine/backends/wasm/parallel';
import type { WasmMemory, WasmModule } from '../../engine/backends/wasm/webAssemblyApi';
import { HELPER_BODY } from './helperProgram';

/** The helper's whole program: its inputs from workerData, then the shared body. */
const HELPER_SOURCE = `
'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const { module, memory, control, tid } = workerData;
const ready = () => parentPort.postMessage('ready');
${HELPER_BODY}`;

/** A ParallelRunner on worker threads, with a promise for when every helper is serving. */
export interface WasmThreads extends ParallelRunner {
  /** Resolves once every helper is attached (or at once without helpers); rejects if one failed to start. */
  whenReady(): Promise<void>;
  /** The first error a helper reported, if any. */
  readonly error: Error | null;
}

/** Helpers that use every core but the caller's: availableParallelism() − 1 (at least 0). */
export function defaultHelperCount(): number {
  return Math.max(0, availableParallelism() - 1);
}

/** Creates (but does not start) `helpers` helper threads; the backend starts them. */
export function createWasmThreads(helpers: number = defaultHelperCount()): WasmThreads {
  const count = Math.max(0, Math.floor(helpers));
  const workers: Worker[] = [];
  let error: Error | null = null;
  let disposed = false;
  let readyCount = 0;
  let settle: { resolve: () => void; reject: (e: Error) => void } | null = null;
  const ready = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Never an unhandled rejection when nobody awaits whenReady().
  ready.catch(() => undefined);
  const fail = (e: Error): void => {
    error ??= e;
    settle?.reject(e);
  };
  return {
    helpers: count,
    get error(): Error | null {
      return error;
    },
    start(module: WasmModule, memory: WasmMemory, control: number): void {
      if (workers.length > 0 || disposed) return;
      if (count === 0) settle?.resolve();
      for (let tid = 1; tid <= count; tid++) {
        const w = new Worker(HELPER_SOURCE, { eval: true, workerData: { module, memory, control, tid } });
        w.on('message', () => {
          // Ready: from now on an idle helper must not keep the process alive.
          w.unref();
          if (++readyCount === count) settle?.resolve();
        });
        w.on('error', (e: Error) => fail(e));
        w.on('exit', (code) => {
          if (!disposed && code !== 0) fail(new Error(`WebAssembly helper thread ${tid} exited with code ${code}`));
        });
        workers.push(w);
      }
    },
    whenReady: (): Promise<void> => ready,
    dispose(): void {
      if (disposed) return;
      disposed = true;
      for (const w of workers) void w.terminate();
      settle?.reject(new Error('WebAssembly helper threads were disposed before they were ready'));
    },
  };
}
