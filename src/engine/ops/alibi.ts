/**
 * ALiBi, attention with linear biases (Press, Smith & Lewis, "Train Short, Test Long",
 * 2022): no position embeddings; instead each head h adds slope_h · (j − i) to the score
 * of query position i and key position j ≤ i. This file gives the slopes; the attention
 * kernel adds the biases (AttentionDims.alibi).
 *
 * Leaves out: the bias itself (ops/attention.ts) and non-causal variants.
 */

import type { FloatArray } from '../backend';

/**
 * The per-head slopes [H] of the paper's (and BLOOM's) `get_slopes`: for H a power of two,
 * slope_h = 2^(−8(h+1)/H); otherwise, with n the largest power of two below H, heads h < n
 * take 2^(−8(h+1)/n) and the remaining H − n heads take the odd-indexed slopes of 2n,
 * 2^(−8(2k+1)/(2n)) for k = 0, 1, …. Computed in float64, stored in the buffer `alloc`
 * returns (a Float64Array by default; pass the backend's `alloc` for its kernels).
 */
export function alibiSlopes(H: number, alloc: (n: number) => FloatArray = (n) => new Float64Array(n)): FloatArray {
  const out = alloc(H);
  let n = 1;
  while (n * 2 <= H) n *= 2;
  for (let h = 0; h < Math.min(n, H); h++) out[h] = Math.pow(2, (-8 * (h + 1)) / n);
  for (let k = 0; n + k < H; k++) out[n + k] = Math.pow(2, (-8 * (2 * k + 1)) / (2 * n));
  return out;
}
