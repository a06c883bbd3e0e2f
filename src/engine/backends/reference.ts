/**
 * The reference backend: every kernel of `Kernels` in plain, readable TypeScript (the
 * files under `ops/`, one per op family). It is the specification the fast WebAssembly
 * backend is tested against, and the fallback where WebAssembly is unavailable.
 *
 * `dtype: 'f64'` allocates Float64Array buffers, so finite-difference gradient checks run
 * in double precision; the kernels themselves accept either array type.
 *
 * Leaves out: threads and SIMD (the fast backend), and buffer planning (the models').
 */

import type { Backend, FloatArray } from '../backend';
import {
  geluBackward,
  geluForward,
  geluTanhBackward,
  geluTanhForward,
  relu2Backward,
  relu2Forward,
  reluBackward,
  reluForward,
  siluBackward,
  siluForward,
} from '../ops/activations';
import { adamStep } from '../ops/adam';
import { createAttentionKernels } from '../ops/attention';
import { crossEntropyBackward, crossEntropyForward } from '../ops/crossEntropy';
import { dropoutBackward, dropoutForward, dropoutMask } from '../ops/dropout';
import { add, fill, mul, scale, sumSquares } from '../ops/elementwise';
import { embeddingBackward, embeddingForward, positionalBackward, positionalForward } from '../ops/embedding';
import { layernormBackward, layernormForward } from '../ops/layernorm';
import { addBias, biasBackward, matmul } from '../ops/matmul';
import { rmsnormBackward, rmsnormForward } from '../ops/rmsnorm';
import { rope } from '../ops/rope';
import { softcapBackward, softcapForward } from '../ops/softcap';
import { softmaxBackward, softmaxForward } from '../ops/softmax';

/** Options of {@link createReferenceBackend}. */
export interface ReferenceBackendOptions {
  /** Element type of allocated buffers: 'f32' (default, what models train in) or 'f64' (gradient checks). */
  readonly dtype?: 'f32' | 'f64';
}

/**
 * Creates a reference backend, named 'reference' (f32) or 'reference-f64'. Each call
 * returns an independent instance (its attention scratch is its own).
 */
export function createReferenceBackend(opts: ReferenceBackendOptions = {}): Backend {
  const f64 = opts.dtype === 'f64';
  const attention = createAttentionKernels();
  return {
    name: f64 ? 'reference-f64' : 'reference',
    alloc: (n: number): FloatArray => (f64 ? new Float64Array(n) : new Float32Array(n)),
    allocBytes: (n: number): Uint8Array => new Uint8Array(n),
    fill,
    scale,
    add,
    sumSquares,
    matmul,
    addBias,
    biasBackward,
    embeddingForward,
    embeddingBackward,
    positionalForward,
    positionalBackward,
    layernormForward,
    layernormBackward,
    rmsnormForward,
    rmsnormBackward,
    rope,
    reluForward,
    reluBackward,
    geluForward,
    geluBackward,
    geluTanhForward,
    geluTanhBackward,
    siluForward,
    siluBackward,
    relu2Forward,
    relu2Backward,
    mul,
    softcapForward,
    softcapBackward,
    dropoutMask,
    dropoutForward,
    dropoutBackward,
    softmaxForward,
    softmaxBackward,
    attentionForward: attention.attentionForward,
    attentionBackward: attention.attentionBackward,
    crossEntropyForward,
    crossEntropyBackward,
    adamStep,
  };
}
