/**
 * What a head attends to, as one number per head: the scores the dashboard plots over
 * training and `attention-lab heads` prints. Each is a mean of attention weights, so it lies
 * in [0, 1]; entropy is in nats. Pure functions over one layer's attention probabilities.
 *
 * Legend: H heads, T query rows, S key columns; `probs` is [H, T, S], each row sums to 1
 * over the keys it may attend to. `rows` (≤ T) and `cols` (≤ S) say how many rows and keys
 * hold real tokens (the rest are padding), so padding never dilutes a score.
 *
 * Self-attention (Olsson et al. 2022, "In-context Learning and Induction Heads"; Elhage et
 * al. 2021, "A Mathematical Framework for Transformer Circuits"):
 * - previousToken = mean over t ∈ [1, rows) of A[t, t−1]
 * - firstToken    = mean over t ∈ [1, rows) of A[t, 0]  (position 0 holds BOS: a head that
 *                   parks its weight there is an "attention sink", Xiao et al. 2023)
 * - diagonal      = mean over t ∈ [1, rows) of A[t, t]
 * - induction     = mean over t ∈ [from, to) of A[t, t − period + 1], on a sequence whose
 *                   tokens at [from − period, to − period) repeat at [from, to): the weight a
 *                   token in the second copy puts on the token *after* its earlier occurrence
 * - entropy       = mean over t ∈ [0, rows) of −Σ_s A[t, s] ln A[t, s]
 * Row 0 is left out of the first three: under a causal mask it can only attend to itself.
 *
 * Cross-attention (decoder row t, source column s; the alignment of Bahdanau et al. 2015):
 * - diagonal      = mean over t ∈ [0, n) of A[t, t]            (copying aligns t with t)
 * - antiDiagonal  = mean over t ∈ [0, n) of A[t, cols − 1 − t]  (reversing aligns t with the mirror)
 * with n = min(rows, cols), plus entropy as above.
 *
 * Leaves out: which batch to score (src/lab/inference/headScores.ts builds the diagnostic sequences).
 */

/** Scores of one self-attention head. */
export interface SelfHeadScores {
  readonly previousToken: number;
  readonly firstToken: number;
  readonly diagonal: number;
  readonly induction: number;
  readonly entropy: number;
}

/** Scores of one cross-attention head. */
export interface CrossHeadScores {
  readonly diagonal: number;
  readonly antiDiagonal: number;
  readonly entropy: number;
}

/** One layer's attention probabilities [H, T, S] and how many rows and keys are real tokens. */
export interface HeadMap {
  readonly probs: Float32Array;
  readonly shape: readonly [number, number, number];
  /** Rows holding real tokens (default T). */
  readonly rows?: number;
  /** Keys holding real tokens (default S). */
  readonly cols?: number;
}

/** Where a sequence repeats: rows [from, to) repeat the tokens `period` positions earlier. */
export interface Repeat {
  readonly period: number;
  readonly from: number;
  readonly to: number;
}

function dims(m: HeadMap): { H: number; T: number; S: number; rows: number; cols: number } {
  const [H, T, S] = m.shape;
  if (m.probs.length !== H * T * S)
    throw new Error(`attention of ${m.probs.length} values does not fill [${H}, ${T}, ${S}]`);
  return { H, T, S, rows: Math.min(m.rows ?? T, T), cols: Math.min(m.cols ?? S, S) };
}

/** Mean over rows t ∈ [lo, hi) of A[h, t, key(t)], skipping keys outside [0, cols); 0 when no row counts. */
function meanAt(m: HeadMap, h: number, lo: number, hi: number, key: (t: number) => number): number {
  const { T, S, cols } = dims(m);
  let sum = 0;
  let n = 0;
  for (let t = lo; t < hi; t++) {
    const s = key(t);
    if (s < 0 || s >= cols) continue;
    sum += m.probs[(h * T + t) * S + s] as number;
    n++;
  }
  return n ? sum / n : 0;
}

/** Mean row entropy of head h in nats (0·ln 0 = 0). */
export function headEntropy(m: HeadMap, h: number): number {
  const { T, S, rows, cols } = dims(m);
  if (rows === 0) return 0;
  let sum = 0;
  for (let t = 0; t < rows; t++) {
    const row = (h * T + t) * S;
    for (let s = 0; s < cols; s++) {
      const p = m.probs[row + s] as number;
      if (p > 0) sum -= p * Math.log(p);
    }
  }
  return sum / rows;
}

/**
 * Induction score of head h: the mean weight from each row t of the repeat to the key
 * t − period + 1, the token that followed t's token the first time (Olsson et al. 2022).
 */
export function inductionScore(m: HeadMap, h: number, r: Repeat): number {
  return meanAt(m, h, r.from, Math.min(r.to, dims(m).rows), (t) => t - r.period + 1);
}

/**
 * Self-attention scores of every head. `repeat` says where the sequence repeats (for
 * induction); without it, induction is 0.
 */
export function selfHeadScores(m: HeadMap, repeat?: Repeat): SelfHeadScores[] {
  const { H, rows } = dims(m);
  return Array.from({ length: H }, (_, h) => ({
    previousToken: meanAt(m, h, 1, rows, (t) => t - 1),
    firstToken: meanAt(m, h, 1, rows, () => 0),
    diagonal: meanAt(m, h, 1, rows, (t) => t),
    induction: repeat ? inductionScore(m, h, repeat) : 0,
    entropy: headEntropy(m, h),
  }));
}

/** Cross-attention alignment scores of every head. */
export function crossHeadScores(m: HeadMap): CrossHeadScores[] {
  const { H, rows, cols } = dims(m);
  const n = Math.min(rows, cols);
  return Array.from({ length: H }, (_, h) => ({
    diagonal: meanAt(m, h, 0, n, (t) => t),
    antiDiagonal: meanAt(m, h, 0, n, (t) => cols - 1 - t),
    entropy: headEntropy(m, h),
  }));
}
