/**
 * Layer normalization (Ba, Kiros & Hinton, "Layer Normalization", 2016) over the last
 * dimension, as PyTorch's nn.LayerNorm computes it: biased variance, eps inside the root.
 *
 * Shape legend: N rows (= B·T), C channels. x, y, dx, dy are [N, C]; w, b, dw, db are [C];
 * mean and rstd are [N], saved by forward for backward.
 *
 * Leaves out: RMSNorm and normalization over other axes; the residual add around it.
 */

import type { FloatArray } from '../backend';

/**
 * y = (x − mean) · rstd · w + b per row, rstd = 1 / sqrt(var + eps), var the biased
 * (÷C) variance. Saves mean and rstd. `b` null means no bias. Mean and variance are
 * computed in float64, in two passes (the one-pass E[x²] − E[x]² loses digits when
 * |mean| ≫ std).
 */
export function layernormForward(
  y: FloatArray,
  mean: FloatArray,
  rstd: FloatArray,
  x: FloatArray,
  w: FloatArray,
  b: FloatArray | null,
  N: number,
  C: number,
  eps: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    let sum = 0;
    for (let c = 0; c < C; c++) sum += x[row + c] as number;
    const mu = sum / C;
    let sq = 0;
    for (let c = 0; c < C; c++) {
      const d = (x[row + c] as number) - mu;
      sq += d * d;
    }
    const rs = 1 / Math.sqrt(sq / C + eps);
    for (let c = 0; c < C; c++) {
      const norm = ((x[row + c] as number) - mu) * rs;
      y[row + c] = norm * (w[c] as number) + (b === null ? 0 : (b[c] as number));
    }
    mean[n] = mu;
    rstd[n] = rs;
  }
}

/**
 * Differentiates y = x̂ · w + b with x̂ = (x − mean) · rstd (accumulates dx, dw, db):
 *   dw += Σ_n dy ⊙ x̂,   db += Σ_n dy,
 *   dx += rstd · (g − mean_c(g) − x̂ · mean_c(g ⊙ x̂))   where g = dy ⊙ w,
 * the standard result of pushing g through the mean and the variance (both depend on
 * every x in the row). x̂ is recomputed from the saved mean and rstd.
 */
export function layernormBackward(
  dx: FloatArray,
  dw: FloatArray,
  db: FloatArray | null,
  dy: FloatArray,
  x: FloatArray,
  mean: FloatArray,
  rstd: FloatArray,
  w: FloatArray,
  N: number,
  C: number,
): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    const mu = mean[n] as number;
    const rs = rstd[n] as number;
    // Row means of g and g ⊙ x̂.
    let gMean = 0;
    let gxMean = 0;
    for (let c = 0; c < C; c++) {
      const g = (dy[row + c] as number) * (w[c] as number);
      gMean += g;
      gxMean += g * ((x[row + c] as number) - mu) * rs;
    }
    gMean /= C;
    gxMean /= C;
    for (let c = 0; c < C; c++) {
      const d = dy[row + c] as number;
      const xHat = ((x[row + c] as number) - mu) * rs;
      const g = d * (w[c] as number);
      dx[row + c] = (dx[row + c] as number) + rs * (g - gMean - xHat * gxMean);
      dw[c] = (dw[c] as number) + d * xHat;
      if (db !== null) db[c] = (db[c] as number) + d;
    }
  }
}
