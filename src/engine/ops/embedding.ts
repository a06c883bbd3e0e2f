/**
 * Token embeddings and positional encodings (Vaswani et al. §3.4–3.5).
 *
 * Shape legend: N rows (= B·T), B batch, T positions in this call, C channels (d_model),
 * V vocabulary; tables are row-major [V, C] (tokens) and [maxLen, C] (positions).
 *
 * - embeddingForward/Backward: out[n] = table[ids[n]] · scale, where the paper's scale is
 *   √d_model (§3.4); 1 when the model does not scale.
 * - positionalForward/Backward: adds rows start..start+T of a position table (sinusoidal
 *   from `sinusoidalTable`, or learned) to every batch item. `start` lets a decoder with a
 *   key/value cache add the position of the token it is on.
 *
 * Leaves out: dropout after the sum (a separate kernel) and the choice of which table to
 * use (the model's job). The sinusoidal table is a constant, so its backward is simply
 * never called.
 */

import type { FloatArray } from '../backend';
import { EngineError } from '../errors';

/**
 * Throws when a token id cannot index the table: an id from a tokenizer that does not
 * match the model (or corrupted input) must not silently read past the table.
 */
function checkId(id: number, n: number, table: FloatArray, C: number): void {
  if (!(id >= 0 && (id + 1) * C <= table.length)) {
    const rows = Math.floor(table.length / C);
    throw new EngineError(
      'input/invalid',
      `Token id ${id} at position ${n} is outside the embedding table (ids 0..${rows - 1}); ` +
        'use the tokenizer the model was trained with, or retrain with a vocabulary that covers this id.',
    );
  }
}

/** out[n, :] = table[ids[n], :] · scale (overwrites out). Throws EngineError for an id outside the table. */
export function embeddingForward(
  out: FloatArray,
  ids: Int32Array,
  table: FloatArray,
  N: number,
  C: number,
  scale: number,
): void {
  for (let n = 0; n < N; n++) {
    const id = ids[n] as number;
    checkId(id, n, table, C);
    const src = id * C;
    const dst = n * C;
    for (let c = 0; c < C; c++) out[dst + c] = (table[src + c] as number) * scale;
  }
}

/**
 * Differentiates out[n, :] = table[ids[n], :] · scale:
 * dtable[ids[n], :] += dout[n, :] · scale (accumulates), skipping rows whose id equals
 * paddingIdx (pass -1 for none) so the padding embedding never moves (PyTorch's
 * `padding_idx`). A token seen twice gets both rows' gradients.
 */
export function embeddingBackward(
  dtable: FloatArray,
  dout: FloatArray,
  ids: Int32Array,
  N: number,
  C: number,
  scale: number,
  paddingIdx: number,
): void {
  for (let n = 0; n < N; n++) {
    const id = ids[n] as number;
    if (id === paddingIdx) continue;
    checkId(id, n, dtable, C);
    const dst = id * C;
    const src = n * C;
    for (let c = 0; c < C; c++) dtable[dst + c] = (dtable[dst + c] as number) + (dout[src + c] as number) * scale;
  }
}

/** x[b, t, :] += pe[start + t, :] for b < B, t < T (x is [B, T, C], pe is [maxLen, C]). */
export function positionalForward(x: FloatArray, pe: FloatArray, B: number, T: number, C: number, start: number): void {
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const xRow = (b * T + t) * C;
      const peRow = (start + t) * C;
      for (let c = 0; c < C; c++) x[xRow + c] = (x[xRow + c] as number) + (pe[peRow + c] as number);
    }
  }
}

/**
 * Differentiates x[b, t, :] += pe[start + t, :]: dpe[start + t, :] += Σ_b dx[b, t, :]
 * (accumulates; used for learned positions only).
 */
export function positionalBackward(
  dpe: FloatArray,
  dx: FloatArray,
  B: number,
  T: number,
  C: number,
  start: number,
): void {
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const dxRow = (b * T + t) * C;
      const peRow = (start + t) * C;
      for (let c = 0; c < C; c++) dpe[peRow + c] = (dpe[peRow + c] as number) + (dx[dxRow + c] as number);
    }
  }
}

/**
 * The sinusoidal position table [maxLen, dModel] of Vaswani et al. §3.5:
 *   PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
 *   PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
 * Both channels of a pair share one frequency; the base is 10000 (the seed notebooks'
 * variants with base 1000, `2*i` applied to an index that already steps by two, or sin in
 * both halves are bugs: docs/ARCHITECTURE.md, "What the engine does not copy from the
 * tutorials"). An odd d_model ends on a lone sin channel.
 * Computed in float64, stored in float32. Throws EngineError for a non-positive or
 * fractional size.
 */
export function sinusoidalTable(maxLen: number, dModel: number): Float32Array {
  if (!Number.isInteger(maxLen) || maxLen < 1 || !Number.isInteger(dModel) || dModel < 1) {
    throw new EngineError(
      'config/invalid',
      `A sinusoidal position table needs positive integer sizes; got maxLen ${maxLen} and d_model ${dModel}. ` +
        'Set maxLen and dModel to whole numbers of at least 1.',
    );
  }
  const pe = new Float32Array(maxLen * dModel);
  for (let c = 0; c < dModel; c += 2) {
    // c is the even channel 2i, so the exponent is c / d_model (not 2c / d_model).
    const denom = Math.pow(10000, c / dModel);
    for (let pos = 0; pos < maxLen; pos++) {
      const angle = pos / denom;
      pe[pos * dModel + c] = Math.sin(angle);
      if (c + 1 < dModel) pe[pos * dModel + c + 1] = Math.cos(angle);
    }
  }
  return pe;
}
