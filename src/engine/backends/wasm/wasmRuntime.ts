/**
 * The state one WebAssembly backend instance shares between its kernel wrappers: the heap,
 * the module instance, the control block (kernel arguments, per-thread scratch), staging
 * regions for the byte and int arrays kernels read when they live outside the heap (token
 * ids; masks and dropout keeps from callers that did not use the backend's `allocBytes`),
 * copied in per call, and the helper threads.
 *
 * `exec` is the one place that decides how a kernel runs: cut into chunks that every thread
 * claims (assembly/threads.ts) when the helpers are ready and the call's work is large
 * enough to repay waking them (a few microseconds), else whole on this thread. Kernel
 * results do not depend on the choice.
 *
 * Leaves out: the kernels' argument layouts (each wrapper writes its own slots).
 */

import type { FloatArray, Kernels } from '../../backend';
import { createReferenceBackend } from '../reference';
import type { ParallelRunner } from './parallel';
import type { KernelConstants, KernelExports } from './wasmModule';
import { Region, WasmHeap } from './wasmHeap';
import type { WasmModule } from './webAssemblyApi';

/** Smallest work estimate (≈ element operations) worth splitting over threads. */
export const PARALLEL_MIN_WORK = 1 << 16;

/** Shared state of one backend instance (see file header). */
export class WasmRuntime {
  readonly heap: WasmHeap;
  readonly fns: KernelExports;
  readonly c: KernelConstants;
  /** The control block's f64 argument slots. */
  readonly args: Float64Array;
  readonly control: number;
  /** Reference kernels (float32): the fallback for arrays outside the heap. */
  readonly ref: Kernels = createReferenceBackend();
  /** Staging for masks / first byte array of a call. */
  readonly bytesA: Region;
  /** Staging for dropout keep masks (in, or out of dropoutMask) and AdamW's decay mask. */
  readonly bytesB: Region;
  /** Staging for token ids and targets. */
  readonly intsA: Region;
  /** Shared outputs: per-row losses, sum-of-squares partials (f64). */
  readonly shared: Region;
  private readonly runner: ParallelRunner | null;
  private readonly threads: number;
  private scratchBytes = 0;
  private helpersReady = false;
  private failed = false;
  /** Kernel calls run in chunks shared with the helpers, and run alone. */
  readonly jobs = { parallel: 0, single: 0 };

  constructor(
    heap: WasmHeap,
    fns: KernelExports,
    c: KernelConstants,
    module: WasmModule,
    runner: ParallelRunner | null,
  ) {
    this.heap = heap;
    this.fns = fns;
    this.c = c;
    this.control = heap.allocBytes(c.CTL_BYTES);
    fns.setControl(this.control, 0);
    this.args = new Float64Array(heap.memory.buffer, this.control + c.CTL_ARGS, c.MAX_ARGS);
    this.bytesA = new Region(heap);
    this.bytesB = new Region(heap);
    this.intsA = new Region(heap);
    this.shared = new Region(heap);
    const helpers = runner ? Math.max(0, Math.min(runner.helpers, c.MAX_THREADS - 1)) : 0;
    this.threads = 1 + helpers;
    this.runner = helpers > 0 ? runner : null;
    this.ensureScratch(1 << 20);
    if (this.runner) this.runner.start(module, heap.memory, this.control);
  }

  /** Threads a parallel job uses (1 + helpers). */
  get threadCount(): number {
    return this.threads;
  }

  /** True once every helper has entered its loop. */
  parallelReady(): boolean {
    if (this.helpersReady) return true;
    if (!this.runner || this.failed) return false;
    this.helpersReady = Atomics.load(this.heap.ints(), (this.control + this.c.CTL_READY) >> 2) >= this.threads - 1;
    return this.helpersReady;
  }

  /** Makes every thread's scratch area at least `bytes` long. */
  ensureScratch(bytes: number): void {
    if (bytes <= this.scratchBytes) return;
    const size = Math.max(bytes, this.scratchBytes * 2);
    const table = new Uint32Array(this.heap.memory.buffer, this.control + this.c.CTL_SCRATCH, this.c.MAX_THREADS);
    for (let t = 0; t < this.threads; t++) table[t] = this.heap.allocBytes(size);
    this.scratchBytes = size;
  }

  /** Byte address of x in the heap, or −1. */
  ptr(x: FloatArray): number {
    return this.heap.ptr(x);
  }

  /**
   * Runs `kernel` (arguments already written): alone, or — when `work` is large enough and
   * the helpers are ready — in chunksPerThread chunks per thread that all threads claim.
   */
  exec(kernel: number, work: number, chunksPerThread = 4): void {
    const parallel = work >= PARALLEL_MIN_WORK && this.parallelReady();
    if (parallel) this.jobs.parallel++;
    else this.jobs.single++;
    if (this.fns.run(kernel, parallel ? this.threads * chunksPerThread : 1, parallel ? 1 : 0) === 0) {
      this.failed = true;
      this.helpersReady = false;
      throw new Error(
        'A WebAssembly helper thread failed while running a kernel; the backend continues on one ' +
          'thread. This is a bug: please report it.',
      );
    }
  }

  /** Stops the helper threads (idempotent). */
  dispose(): void {
    if (!this.runner) return;
    this.fns.stopHelpers(this.control);
    this.runner.dispose();
    this.helpersReady = false;
    this.failed = true;
  }
}
