/**
 * Helper threads for the WebAssembly backend in a browser (the `ParallelRunner` of
 * src/engine/backends/wasm/parallel.ts): Web Workers started from a `blob:` URL of a short
 * classic script, each handed the compiled module, the shared memory and its index by
 * postMessage, then woken through the control block with Atomics, as Node's helpers are
 * (threads.node.ts). A shared memory can only be posted to another thread where the page is
 * cross-origin isolated (COOP/COEP: `crossOriginIsolated`, `SharedArrayBuffer` defined), so
 * {@link webThreadsAvailable} says whether helpers can exist here at all.
 *
 * Leaves out: deciding which kernels go parallel (the backend, by size).
 */

import type { ParallelRunner } from '../../engine/backends/wasm/parallel';
import type { WasmMemory, WasmModule } from '../../engine/backends/wasm/webAssemblyApi';
import { HELPER_BODY } from './helperProgram';

/** The helper's whole program: its inputs from the first message, then the shared body. */
const HELPER_SOURCE = `
'use strict';
self.onmessage = (event) => {
  const { module, memory, control, tid } = event.data;
  const ready = () => self.postMessage('ready');
  ${HELPER_BODY}
};
`;

/** The parts of the browser's worker API this uses (the lab compiles against Node's types). */
interface BrowserWorker {
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: ((e: { message?: string }) => void) | null;
  postMessage(msg: unknown): void;
  terminate(): void;
}
interface BrowserScope {
  readonly crossOriginIsolated?: boolean;
  readonly SharedArrayBuffer?: unknown;
  readonly navigator?: { readonly hardwareConcurrency?: number };
  readonly Worker?: new (url: string, options?: { name?: string }) => BrowserWorker;
  readonly Blob?: new (parts: string[], options: { type: string }) => unknown;
  readonly URL?: { createObjectURL(blob: unknown): string; revokeObjectURL(url: string): void };
}

const scope = (): BrowserScope => globalThis as BrowserScope;

/** True where helper threads can share the backend's memory: a cross-origin isolated page that can start workers. */
export function webThreadsAvailable(): boolean {
  const g = scope();
  return g.crossOriginIsolated === true && typeof g.SharedArrayBuffer === 'function' && typeof g.Worker === 'function';
}

/** Helpers that use every core but the caller's (at least 0). */
export function defaultWebHelpers(): number {
  return Math.max(0, (scope().navigator?.hardwareConcurrency ?? 1) - 1);
}

/** Creates (but does not start) `helpers` helper workers; the backend starts them. */
export function createWebThreads(helpers: number = defaultWebHelpers()): ParallelRunner {
  const count = Math.max(0, Math.floor(helpers));
  const workers: BrowserWorker[] = [];
  let disposed = false;
  let url: string | null = null;
  return {
    helpers: count,
    start(module: WasmModule, memory: WasmMemory, control: number): void {
      const g = scope();
      if (workers.length > 0 || disposed || count === 0 || !g.Worker || !g.Blob || !g.URL) return;
      url = g.URL.createObjectURL(new g.Blob([HELPER_SOURCE], { type: 'text/javascript' }));
      for (let tid = 1; tid <= count; tid++) {
        const w = new g.Worker(url, { name: `attention-lab wasm helper ${tid}` });
        // A helper that fails to start never reports ready: the backend keeps to one thread.
        w.onerror = () => undefined;
        w.postMessage({ module, memory, control, tid });
        workers.push(w);
      }
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      for (const w of workers) w.terminate();
      if (url) scope().URL?.revokeObjectURL(url);
    },
  };
}
