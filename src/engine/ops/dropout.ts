/**
 * Inverted dropout (Srivastava et al., 2014, as used by Vaswani et al. §5.4): kept units
 * are scaled by 1 / (1 − p) at training time so inference needs no rescaling.
 *
 * Leaves out: drawing the keep mask. The caller draws it with `drawKeepMask`
 * (backend.ts) from its own seeded `Rng` and passes the same mask to forward and
 * backward, so the kernels stay deterministic and free of randomness.
 */

import type { FloatArray } from '../backend';

/**
 * Scale applied to kept units, 1 / (1 − p). p ≥ 1 drops everything, so the scale is 0
 * rather than 1/0 (0 · Infinity would be NaN). Shared with attention's probability dropout.
 */
export function keepScale(p: number): number {
  return p >= 1 ? 0 : 1 / (1 - p);
}

/**
 * y = x · keep / (1 − p). With p = 0 this is a plain copy and `keep` is ignored (it may be
 * stale or all zeros), so turning dropout off never depends on the mask's contents.
 */
export function dropoutForward(y: FloatArray, x: FloatArray, keep: Uint8Array, n: number, p: number): void {
  if (p === 0) {
    for (let i = 0; i < n; i++) y[i] = x[i] as number;
    return;
  }
  const s = keepScale(p);
  for (let i = 0; i < n; i++) y[i] = keep[i] === 1 ? (x[i] as number) * s : 0;
}

/**
 * Differentiates y = x · keep / (1 − p): dx += dy · keep / (1 − p) (accumulates; with
 * p = 0, dx += dy).
 */
export function dropoutBackward(dx: FloatArray, dy: FloatArray, keep: Uint8Array, n: number, p: number): void {
  if (p === 0) {
    for (let i = 0; i < n; i++) dx[i] = (dx[i] as number) + (dy[i] as number);
    return;
  }
  const s = keepScale(p);
  for (let i = 0; i < n; i++) {
    if (keep[i] === 1) dx[i] = (dx[i] as number) + (dy[i] as number) * s;
  }
}
