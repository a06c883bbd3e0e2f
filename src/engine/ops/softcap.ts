/**
 * Soft-capping (Gemma 2; nanochat's logits): y = cap · tanh(x / cap), which keeps |y| < cap
 * while staying close to the identity for |x| ≪ cap. Used on the output logits
 * (logitSoftCap) and, inside the attention kernel, on the scaled scores (attnSoftCap).
 *
 * Leaves out: the attention scores' cap (fused into ops/attention.ts).
 */

import type { FloatArray } from '../backend';

/** y = cap · tanh(x / cap) over n elements (overwrites y; y may alias x). cap > 0. */
export function softcapForward(y: FloatArray, x: FloatArray, n: number, cap: number): void {
  for (let i = 0; i < n; i++) y[i] = cap * Math.tanh((x[i] as number) / cap);
}

/**
 * The backward, IN PLACE on the gradient d (not accumulating, unlike other backward
 * kernels): d[i] *= 1 − (y[i] / cap)², y the capped output saved by forward, since
 * d/dx cap · tanh(x / cap) = 1 − tanh²(x / cap). The caller runs it on dy before passing it
 * down, so the capped logits need no second buffer.
 */
export function softcapBackward(d: FloatArray, y: FloatArray, n: number, cap: number): void {
  for (let i = 0; i < n; i++) {
    const t = (y[i] as number) / cap;
    d[i] = (d[i] as number) * (1 - t * t);
  }
}
