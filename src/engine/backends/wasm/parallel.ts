/**
 * The seam between the WebAssembly backend and the threads that help it. The engine may
 * not create threads (no `worker_threads` in src/engine), so a host injects a
 * `ParallelRunner`; Node's implementation is src/lab/platform/threads.node.ts.
 *
 * Protocol (assembly/threads.ts, assembly/kernels.ts): each helper instantiates the
 * backend's compiled module on the backend's shared memory with imports
 * `{ env: { memory } }`, calls `seen = helperAttach(control, tid)` with its index
 * tid = 1..helpers (which counts it READY), then `helperLoop(seen)`, which claims chunks of
 * posted jobs and returns when the backend stops it. If it throws (a trap), the helper must
 * store 1 in the int32 at byte offset CTL_FAILED of the control block and notify the int32
 * at CTL_DONE, so the waiting caller is released and reports the failure. The offsets are
 * the module's exported constants of those names.
 *
 * The backend uses helpers only once all of them are READY; the caller claims chunks too,
 * so a helper that is slow to wake or starved of a core only means fewer chunks for it.
 * Every chunk's result is the same whichever thread computes it, so results never depend
 * on when helpers start, how many there are, or how the chunks fall.
 */

import type { WasmMemory, WasmModule } from './webAssemblyApi';

/** Helper threads for the WebAssembly backend. */
export interface ParallelRunner {
  /** Number of helper threads; kernels split over helpers + 1 threads. */
  readonly helpers: number;
  /**
   * Starts the helpers on this module, memory and control block (called once, by the
   * backend). Must not block: helpers report readiness through the control block.
   */
  start(module: WasmModule, memory: WasmMemory, control: number): void;
  /** Stops the helper threads (idempotent). After it, the process may exit. */
  dispose(): void;
}
