/**
 * Reading a model's logits during decoding: a numerically stable log-sum-exp per row (so
 * log p(v) = x[v] − lse without materializing a log-softmax), the greedy argmax, and the
 * check that a step returned enough logits and finite ones.
 *
 * Leaves out: tempered and truncated distributions (sample.ts) and candidate ranking
 * (beam.ts, topK.ts).
 */

import { EngineError } from '../errors';

/**
 * log Σ_v exp(x[offset + v]) over V logits, in float64. Subtracting the max first keeps
 * every exp ≤ 1, so large logits cannot overflow and the largest term is exactly 1, so the
 * sum cannot underflow to 0. Throws EngineError('train/nonFinite') when the result is not
 * finite (a NaN or +∞ logit, or every logit −∞): the model's weights have diverged.
 */
export function rowLogSumExp(logits: Float32Array, offset: number, V: number, step: number): number {
  let m = -Infinity;
  let sawNaN = false;
  for (let v = 0; v < V; v++) {
    const x = logits[offset + v] as number;
    if (x > m) m = x;
    else if (x !== x) sawNaN = true;
  }
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[offset + v] as number) - m);
  const lse = m + Math.log(sum);
  if (sawNaN || !Number.isFinite(lse)) {
    throw new EngineError(
      'train/nonFinite',
      `The model produced non-finite logits (max ${m}) at decode step ${step}; expected finite ` +
        `numbers. The checkpoint has diverged or is damaged: load an earlier checkpoint or retrain ` +
        `with a lower learning rate.`,
    );
  }
  return lse;
}

/** Index of the largest of V logits starting at `offset`; the lowest index wins a tie. */
export function argmaxRow(logits: Float32Array, offset: number, V: number): number {
  let best = 0;
  let bestX = logits[offset] as number;
  for (let v = 1; v < V; v++) {
    const x = logits[offset + v] as number;
    if (x > bestX) {
      bestX = x;
      best = v;
    }
  }
  return best;
}

/** Throws EngineError('shape/mismatch') unless a step returned at least rows·V logits. */
export function checkLogitsLength(logits: Float32Array, rows: number, V: number): void {
  if (logits.length < rows * V) {
    throw new EngineError(
      'shape/mismatch',
      `The decode stepper returned ${logits.length} logits for ${rows} row(s); expected at least ` +
        `${rows * V} (rows × vocabSize ${V}). The model's stepper and its vocabulary disagree.`,
    );
  }
}
