/**
 * The metric that patching and attribution measure a prompt by, read from the logits the
 * model predicts (after its logit soft-cap) at one position: `logit-diff` = logit[answer] −
 * logit[wrong], or `logprob` = log-softmax[answer]; and its gradient at the logits, the seed
 * of a backward pass (attribution patching). Sums run in float64.
 *
 * Leaves out: which position (the callers read the last) and how tokens are named.
 *
 * Shape legend: V vocabulary.
 */

/** What to measure: the answer's logit minus the wrong token's, or the answer's log-probability. */
export interface LogitMetric {
  readonly kind: 'logit-diff' | 'logprob';
  readonly answer: number;
  /** The other token of `logit-diff` (ignored by `logprob`). */
  readonly wrong: number;
}

/** log Σ_v exp(logits[row, v]) in float64, after subtracting the row's largest. */
function logSumExp(logits: ArrayLike<number>, base: number, V: number): number {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[base + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[base + v] as number) - max);
  return max + Math.log(sum);
}

/** The metric of row `row` of logits [rows, V]. */
export function metricOf(logits: ArrayLike<number>, row: number, V: number, m: LogitMetric): number {
  const base = row * V;
  const a = logits[base + m.answer] as number;
  if (m.kind === 'logit-diff') return a - (logits[base + m.wrong] as number);
  return a - logSumExp(logits, base, V);
}

/**
 * ∂metric/∂logits written into `seed` [rows, V]: zero except row `row` — logit-diff: +1 at the
 * answer, −1 at the wrong token; logprob: onehot(answer) − softmax(row).
 */
export function metricSeed(
  seed: Float32Array | Float64Array,
  logits: ArrayLike<number>,
  row: number,
  V: number,
  m: LogitMetric,
): void {
  seed.fill(0);
  const base = row * V;
  if (m.kind === 'logit-diff') {
    seed[base + m.answer] = 1;
    seed[base + m.wrong] = (seed[base + m.wrong] as number) - 1;
    return;
  }
  const lse = logSumExp(logits, base, V);
  for (let v = 0; v < V; v++) seed[base + v] = -Math.exp((logits[base + v] as number) - lse);
  seed[base + m.answer] = (seed[base + m.answer] as number) + 1;
}
