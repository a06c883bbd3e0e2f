/**
 * Choosing a backend: the WebAssembly SIMD backend where the runtime supports it, the
 * reference backend otherwise (or when asked for by name, e.g. to compare the two).
 *
 * Leaves out: threads — the engine cannot start them; pass a ParallelRunner (Node's is
 * src/lab/platform/threads.node.ts) to use more than one core.
 */

import type { Backend } from '../backend';
import { EngineError } from '../errors';
import { createReferenceBackend } from './reference';
import type { ParallelRunner } from './wasm/parallel';
import { createWasmBackend } from './wasm/wasmBackend';

/** Which backend to use: 'auto' = wasm where available, else reference. */
export type BackendKind = 'auto' | 'wasm' | 'reference';

/** Options of {@link createBackend}. */
export interface CreateBackendOptions {
  /** Helper threads for the wasm backend (ignored by the reference backend, which then does not own it). */
  readonly runner?: ParallelRunner | null;
}

/**
 * Creates a backend of `kind`. 'wasm' throws EngineError('config/invalid') where
 * WebAssembly SIMD or shared memory is unavailable; 'auto' falls back to the reference.
 */
export function createBackend(kind: BackendKind, opts: CreateBackendOptions = {}): Backend {
  if (kind === 'reference') return createReferenceBackend();
  const wasm = createWasmBackend({ runner: opts.runner ?? null });
  if (wasm) return wasm;
  if (kind === 'wasm') {
    throw new EngineError(
      'config/invalid',
      'The wasm backend needs WebAssembly SIMD and shared WebAssembly memory, which this runtime ' +
        'lacks; use backend "auto" or "reference" (Node 20+ and Chromium have both).',
    );
  }
  return createReferenceBackend();
}
