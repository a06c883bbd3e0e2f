/**
 * Cross-entropy over raw logits with integer targets and label smoothing, computed as
 * PyTorch's nn.CrossEntropyLoss(ignore_index, label_smoothing) does. The model's output
 * layer emits logits; this kernel applies its own log-softmax (never softmax the logits
 * before it — one of the tutorial bugs in docs/ARCHITECTURE.md, "What the engine does not
 * copy from the tutorials").
 *
 * Shape legend: N rows (= B·T), V vocabulary; logits/dlogits [N, V], targets and lse [N].
 *
 * Label smoothing (Szegedy et al. 2016; Vaswani et al. §5.4, ε = 0.1): the target
 * distribution is q = (1 − ε)·onehot(t) + ε/V, so per row
 *   loss = −Σ_v q_v log softmax(z)_v = (1 − ε)(lse − z_t) + ε (lse − mean(z)),
 * with lse = logsumexp(z) computed stably (max subtracted).
 *
 * Leaves out: the reduction (the caller divides the returned sum by the count for a
 * mean, and passes gradScale = 1 / count to backward) and class weights.
 */

import type { FloatArray } from '../backend';
import { EngineError } from '../errors';

/** Throws when a target cannot index the vocabulary (and is not the ignore index). */
function checkTarget(t: number, n: number, V: number): void {
  if (!(t >= 0 && t < V)) {
    throw new EngineError(
      'input/invalid',
      `Target id ${t} at row ${n} is outside the output vocabulary (ids 0..${V - 1}); ` +
        'encode the targets with the tokenizer the model was built for, or mark padding with the ignore index.',
    );
  }
}

/** logsumexp of logits[off .. off+V), stable: m + log Σ exp(z − m) with m the row max. */
function logSumExp(logits: FloatArray, off: number, V: number): number {
  let max = -Infinity;
  for (let v = 0; v < V; v++) {
    const z = logits[off + v] as number;
    if (z > max) max = z;
  }
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[off + v] as number) - max);
  return max + Math.log(sum);
}

/**
 * Per row: lse = logsumexp(z), saved to lse[n] for every row (ignored rows included);
 * loss = (1 − ε)(lse − z_t) + ε (lse − mean(z)) summed over rows whose target is not
 * ignoreIndex (pass -1 for none). Returns that sum and the number of rows counted.
 * Throws EngineError for a counted target outside [0, V).
 */
export function crossEntropyForward(
  lse: FloatArray,
  logits: FloatArray,
  targets: Int32Array,
  N: number,
  V: number,
  ignoreIndex: number,
  smoothing: number,
): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (let n = 0; n < N; n++) {
    const off = n * V;
    const l = logSumExp(logits, off, V);
    lse[n] = l;
    const t = targets[n] as number;
    if (t === ignoreIndex) continue;
    checkTarget(t, n, V);
    let loss = (1 - smoothing) * (l - (logits[off + t] as number));
    if (smoothing !== 0) {
      let zSum = 0;
      for (let v = 0; v < V; v++) zSum += logits[off + v] as number;
      loss += smoothing * (l - zSum / V);
    }
    sum += loss;
    count++;
  }
  return { sum, count };
}

/**
 * Differentiates loss = Σ_v −q_v log softmax(z)_v with q = (1 − ε)·onehot(t) + ε/V:
 * dlogits[n, :] += gradScale · (softmax(z) − q) (accumulates), softmax(z) = exp(z − lse)
 * from the saved lse; ignored rows get nothing.
 */
export function crossEntropyBackward(
  dlogits: FloatArray,
  logits: FloatArray,
  lse: FloatArray,
  targets: Int32Array,
  N: number,
  V: number,
  ignoreIndex: number,
  smoothing: number,
  gradScale: number,
): void {
  const uniform = smoothing / V;
  for (let n = 0; n < N; n++) {
    const t = targets[n] as number;
    if (t === ignoreIndex) continue;
    checkTarget(t, n, V);
    const off = n * V;
    const l = lse[n] as number;
    for (let v = 0; v < V; v++) {
      const p = Math.exp((logits[off + v] as number) - l);
      const qv = v === t ? 1 - smoothing + uniform : uniform;
      dlogits[off + v] = (dlogits[off + v] as number) + gradScale * (p - qv);
    }
  }
}
