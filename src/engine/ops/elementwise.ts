/**
 * Element-wise kernels over a flat prefix of n elements: fill, scale, add, the sum of
 * squares used for the global gradient norm (gradient clipping), and the product `mul`
 * (the gate of SwiGLU/GeGLU; its backward is two more `mul`s with accumulate).
 *
 * Leaves out: broadcasting (every caller works on equally sized flat buffers).
 */

import type { FloatArray } from '../backend';

/** x[0..n) = value. */
export function fill(x: FloatArray, n: number, value: number): void {
  for (let i = 0; i < n; i++) x[i] = value;
}

/** x[0..n) *= s. */
export function scale(x: FloatArray, n: number, s: number): void {
  for (let i = 0; i < n; i++) x[i] = (x[i] as number) * s;
}

/** out[0..n) = a + b. `out` may alias `a` or `b`: each index is read before it is written. */
export function add(out: FloatArray, a: FloatArray, b: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) out[i] = (a[i] as number) + (b[i] as number);
}

/**
 * Σ x[i]² over i < n. The running sum is a JS number, i.e. float64, even for a float32
 * buffer: summing millions of squared gradients in float32 would lose the small ones.
 */
export function sumSquares(x: FloatArray, n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const xi = x[i] as number;
    sum += xi * xi;
  }
  return sum;
}

/**
 * out[0..n) = a ⊙ b, or with `accumulate` out += a ⊙ b. Without accumulate, `out` may alias
 * `a` or `b` (each index is read before it is written); with it, out must be a third buffer.
 * The backward of y = a ⊙ b is mul(da, dy, b, n, true) and mul(db, dy, a, n, true).
 */
export function mul(out: FloatArray, a: FloatArray, b: FloatArray, n: number, accumulate: boolean): void {
  if (accumulate) {
    for (let i = 0; i < n; i++) out[i] = (out[i] as number) + (a[i] as number) * (b[i] as number);
  } else {
    for (let i = 0; i < n; i++) out[i] = (a[i] as number) * (b[i] as number);
  }
}
