/**
 * Root-mean-square layer normalization (Zhang & Sennrich, "Root Mean Square Layer
 * Normalization", 2019) over the last dimension, as PyTorch's nn.RMSNorm and the Llama
 * family compute it: y = x / sqrt(mean(x²) + eps) · w, no mean subtracted, never a bias.
 * The weight is optional (nanochat's RMSNorm has none).
 *
 * Shape legend: N rows (= B·T, or B·T·H for a per-head qk-norm), C channels. x, y, dx, dy
 * are [N, C]; w, dw are [C]; rstd is [N], saved by forward for backward.
 *
 * Leaves out: LayerNorm (layernorm.ts) and the residual add around the norm.
 */

import type { FloatArray } from '../backend';

/**
 * y = x · rstd · w per row (w null: no scale), rstd = 1 / sqrt(mean(x²) + eps), saved.
 * The mean of squares is summed in float64. y may alias x (a row is read before it is written).
 */
export function rmsnormForward(
  y: FloatArray,
  rstd: FloatArray,
  x: FloatArray,
  w: FloatArray | null,
  N: number,
  C: number,
  eps: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    let sq = 0;
    for (let c = 0; c < C; c++) {
      const v = x[row + c] as number;
      sq += v * v;
    }
    const rs = 1 / Math.sqrt(sq / C + eps);
    for (let c = 0; c < C; c++) {
      y[row + c] = (x[row + c] as number) * rs * (w === null ? 1 : (w[c] as number));
    }
    rstd[n] = rs;
  }
}

/**
 * Differentiates y = x̂ · w with x̂ = x · rstd (accumulates dx and, unless null, dw):
 *   dw += Σ_n dy ⊙ x̂,
 *   dx += rstd · (g − x̂ · mean_c(g ⊙ x̂))   where g = dy ⊙ w (g = dy when w is null),
 * since ∂rstd/∂x_j = −rstd³ · x_j / C. x̂ is recomputed from the saved rstd.
 */
export function rmsnormBackward(
  dx: FloatArray,
  dw: FloatArray | null,
  dy: FloatArray,
  x: FloatArray,
  rstd: FloatArray,
  w: FloatArray | null,
  N: number,
  C: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    const rs = rstd[n] as number;
    let gxMean = 0;
    for (let c = 0; c < C; c++) {
      const g = (dy[row + c] as number) * (w === null ? 1 : (w[c] as number));
      gxMean += g * (x[row + c] as number) * rs;
    }
    gxMean /= C;
    for (let c = 0; c < C; c++) {
      const d = dy[row + c] as number;
      const xHat = (x[row + c] as number) * rs;
      const g = d * (w === null ? 1 : (w[c] as number));
      dx[row + c] = (dx[row + c] as number) + rs * (g - xHat * gxMean);
      if (dw !== null) dw[c] = (dw[c] as number) + d * xHat;
    }
  }
}
