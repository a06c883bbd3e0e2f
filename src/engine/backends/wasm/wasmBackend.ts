/**
 * The fast default backend: every kernel of `Kernels` compiled from AssemblyScript
 * (assembly/*.ts) to WebAssembly with 128-bit SIMD, optionally split over helper threads
 * that share its memory (see parallel.ts). It implements the same contracts as the
 * reference backend (backends/reference.ts), which is its test oracle and its fallback.
 *
 * - Tensors live in the module's shared memory: `alloc(n)` returns a Float32Array view
 *   into it, `allocBytes(n)` a Uint8Array view (masks, dropout keep-masks; wasmHeap.ts
 *   explains why views survive memory growth). A kernel called with a float array that is
 *   not such a view (tests pass plain arrays; float64 buffers) runs the reference kernel on
 *   it instead, so results are right either way, only slower; a plain byte or int array is
 *   copied into a staging region per call.
 * - A training step allocates nothing: scratch and staging regions grow to the largest
 *   size seen, then are reused.
 * - Results are identical for any number of threads (every output element is computed by
 *   the same sequence of float operations whichever thread computes it), and repeatable
 *   run to run, so the engine's determinism promise holds on this backend.
 * - Numerics are float32 with SIMD lanes: sums group differently from the reference's
 *   float64 loops, exp is a degree-7 polynomial, GELU uses A&S 7.1.26 (|erf error| ≤
 *   1.5e-7), tanh (the soft-cap) is built from exp with a Taylor series near 0; the tests
 *   hold it to the reference within float32 tolerances.
 *
 * Weak spots: memory is never freed (the Backend interface has no `free`), so every new
 * decode stepper's cache adds to the heap until the backend is dropped, and V8 reserves
 * 4 GiB of address space per backend (a model that needs more gets an EngineError).
 * 128-bit SIMD caps the matrix products: with relaxed SIMD's fused multiply-add the 4 × 8
 * micro-kernel runs at ~97% of the two FMA ports' 128-bit peak (46 of 47.7 GFLOP/s per
 * core measured here), without it at ~39 (a multiply and an add per step) — a third of
 * what native BLAS reaches with AVX-512. When other processes keep the cores busy, a helper can
 * be descheduled holding a chunk, and two threads may then be no faster than one.
 *
 * Leaves out: starting threads (the host injects a ParallelRunner), and turning on relaxed
 * SIMD where the runtime hides it behind a flag (Node 20: the host's job, src/lab/platform/wasmFlags.node.ts).
 */

import type { Backend, FloatArray } from '../../backend';
import type { ParallelRunner } from './parallel';
import { createAttentionLossKernels } from './wasmAttention';
import { createDenseKernels } from './wasmDense';
import { WasmHeap } from './wasmHeap';
import { compileKernels, instantiateKernels, wasmFmaAvailable, wasmSimdThreadsAvailable } from './wasmModule';
import { createPointwiseKernels } from './wasmPointwise';
import { WasmRuntime } from './wasmRuntime';
import { webAssembly } from './webAssemblyApi';

/** Options of {@link createWasmBackend}. */
export interface WasmBackendOptions {
  /** Helper threads to split large kernels over (none: this thread only). The backend owns it once created. */
  readonly runner?: ParallelRunner | null;
  /** Initial memory in MiB (default 16); it grows on demand up to the 4 GiB wasm32 limit. */
  readonly initialMemoryMiB?: number;
  /**
   * Use the relaxed-SIMD build with fused multiply-add (default: where the runtime accepts
   * it). False forces the plain SIMD build (tests cover both).
   */
  readonly fma?: boolean;
}

/** The WebAssembly backend: a Backend plus what only it has. */
export interface WasmBackend extends Backend {
  /** Threads a large kernel runs on (1 + helpers). */
  readonly threads: number;
  /** True when the kernels are the relaxed-SIMD build (fused multiply-add). */
  readonly fma: boolean;
  /** True once helper threads (if any) are running and used. */
  threadsReady(): boolean;
  /** Bytes of wasm memory handed out so far. */
  heapBytes(): number;
  /** Kernel calls so far that were shared with helper threads, and that ran on this thread alone. */
  jobStats(): { readonly parallel: number; readonly single: number };
  /** Stops the helper threads (idempotent); the backend keeps working on one thread. */
  dispose(): void;
}

const MAX_PAGES = 65536; // 4 GiB, the wasm32 limit

/**
 * Creates a WebAssembly SIMD backend, or returns null where this runtime lacks WebAssembly
 * SIMD or shared memory (then use the reference backend; see select.ts).
 */
export function createWasmBackend(opts: WasmBackendOptions = {}): WasmBackend | null {
  if (!wasmSimdThreadsAvailable()) return null;
  const fma = opts.fma ?? wasmFmaAvailable();
  if (fma && !wasmFmaAvailable()) return null;
  const module = compileKernels(fma);
  const initialPages = Math.max(2, Math.ceil(((opts.initialMemoryMiB ?? 16) * 1048576) / 65536));
  const wa = webAssembly();
  if (wa === null) return null;
  const memory = new wa.Memory({ initial: initialPages, maximum: MAX_PAGES, shared: true });
  const { fns, consts } = instantiateKernels(module, memory);
  const heap = new WasmHeap(memory, Math.max(fns.heapBase(), 1024));
  const rt = new WasmRuntime(heap, fns, consts, module, opts.runner ?? null);
  return {
    name: 'wasm',
    threads: rt.threadCount,
    fma,
    alloc: (n: number): FloatArray => heap.alloc(n),
    allocBytes: (n: number): Uint8Array => heap.allocU8(n),
    threadsReady: (): boolean => rt.parallelReady(),
    heapBytes: (): number => heap.used,
    jobStats: (): { parallel: number; single: number } => ({ ...rt.jobs }),
    dispose: (): void => rt.dispose(),
    ...createDenseKernels(rt),
    ...createPointwiseKernels(rt),
    ...createAttentionLossKernels(rt),
  };
}
