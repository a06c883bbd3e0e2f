/**
 * Row-wise softmax with an optional attention mask, and its backward.
 *
 * Shape legend: rows × cols, row-major. A mask (1 = may attend, 0 = masked; docs/ARCHITECTURE.md, "Masks")
 * is a broadcast view (`MaskView`): row r of batch item ⌊r / rowsPerBatch⌋ reads
 * mask.data[⌊r / rowsPerBatch⌋ · batchStride + (r mod rowsPerBatch) · rowStride + c].
 *
 * Numerics: softmax(x)_c = exp(x_c − m) / Σ_j exp(x_j − m) with m the row's largest
 * unmasked score, so large logits (1e4) never overflow. Masked entries get probability
 * exactly 0 (they are skipped, not filled with a large negative number, so their score
 * values — even NaN — cannot leak in), and a row with nothing left to attend to (fully
 * masked, or every score −Infinity) is all zeros rather than 0/0 = NaN.
 *
 * Leaves out: temperature and log-softmax (cross-entropy computes its own logsumexp).
 */

import type { FloatArray, MaskView } from '../backend';

/**
 * One masked, stable softmax row: y[yOff + c] for c < n from x[xOff + c], reading mask
 * bytes maskData[mOff + c] when maskData is not null. y may be x at the same offset (in
 * place): each x element is read before its y element is written.
 */
export function softmaxRow(
  y: FloatArray,
  yOff: number,
  x: FloatArray,
  xOff: number,
  n: number,
  maskData: Uint8Array | null,
  mOff: number,
): void {
  let max = -Infinity;
  for (let c = 0; c < n; c++) {
    if (maskData !== null && maskData[mOff + c] === 0) continue;
    const v = x[xOff + c] as number;
    if (v > max) max = v;
  }
  if (max === -Infinity) {
    // Nothing to attend to: an all-zero row, never NaN.
    for (let c = 0; c < n; c++) y[yOff + c] = 0;
    return;
  }
  let sum = 0;
  for (let c = 0; c < n; c++) {
    if (maskData !== null && maskData[mOff + c] === 0) {
      y[yOff + c] = 0;
      continue;
    }
    const e = Math.exp((x[xOff + c] as number) - max);
    y[yOff + c] = e;
    sum += e;
  }
  // sum ≥ 1: the max entry contributes exp(0).
  const inv = 1 / sum;
  for (let c = 0; c < n; c++) y[yOff + c] = (y[yOff + c] as number) * inv;
}

/**
 * y = softmax(x) per row over `cols`, masked entries exactly 0 (overwrites y; y may alias
 * x). See the file header for the mask indexing and the fully masked case.
 */
export function softmaxForward(
  y: FloatArray,
  x: FloatArray,
  rows: number,
  cols: number,
  mask: MaskView | null,
  rowsPerBatch: number,
): void {
  for (let r = 0; r < rows; r++) {
    const mOff =
      mask === null ? 0 : Math.floor(r / rowsPerBatch) * mask.batchStride + (r % rowsPerBatch) * mask.rowStride;
    softmaxRow(y, r * cols, x, r * cols, cols, mask === null ? null : mask.data, mOff);
  }
}

/**
 * Differentiates y = softmax(x) per row: dx += y ⊙ (dy − Σ_c dy·y) (accumulates). The
 * Jacobian is diag(y) − y yᵀ; masked entries have y = 0 and so get no gradient.
 */
export function softmaxBackward(dx: FloatArray, dy: FloatArray, y: FloatArray, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const row = r * cols;
    let dot = 0;
    for (let c = 0; c < cols; c++) dot += (dy[row + c] as number) * (y[row + c] as number);
    for (let c = 0; c < cols; c++) {
      const yc = y[row + c] as number;
      dx[row + c] = (dx[row + c] as number) + yc * ((dy[row + c] as number) - dot);
    }
  }
}
