/**
 * Turns a run's step columns and evaluations into the columns a chart plots: the x-axis in
 * steps, tokens seen or wall-clock seconds; train loss smoothed with a debiased exponential
 * moving average (the smoothing TensorBoard uses: an EMA started from 0 and divided by
 * 1 − wⁿ so the first points are not pulled toward 0); validation loss placed on the row of
 * its step, with gaps (null) elsewhere.
 *
 * When a run has far more steps than the chart has pixels, `decimateRows` picks the rows to
 * draw (min/max per bucket, so spikes survive) and the columns are gathered at those rows.
 *
 * Leaves out: the chart itself (panels/curves.ts) and joining runs with different x values
 * (uPlot.join does that there).
 */

import type { EvalMetrics } from '../../src/protocol/data';
import type { StepColumn, StepColumns } from './stepColumns';

/** What the x-axis measures. */
export type XMode = 'step' | 'tokens' | 'time';

/** What the loss axis measures: nats per token, or bits per UTF-8 byte of the text scored. */
export type LossUnit = 'token' | 'byte';

/**
 * Training loss in bits per byte, row by row: loss · tokens / (bytes · ln 2) with each step's
 * own tokens and bytes (NaN where a step has no byte count: runs logged before it was).
 */
export function bitsPerByteColumn(
  loss: ArrayLike<number>,
  tokens: ArrayLike<number>,
  bytes: ArrayLike<number>,
  out: Float64Array = new Float64Array(loss.length),
): Float64Array {
  for (let i = 0; i < loss.length; i++) {
    const b = bytes[i] as number;
    out[i] = b > 0 ? ((loss[i] as number) * (tokens[i] as number)) / (b * Math.LN2) : Number.NaN;
  }
  return out;
}

/** The step column that holds x for a mode. */
export function xColumnName(mode: XMode): StepColumn {
  return mode === 'step' ? 'step' : mode === 'tokens' ? 'tokensSeen' : 'wallSec';
}

/** Axis label of a mode. */
export function xLabel(mode: XMode): string {
  return mode === 'step' ? 'step' : mode === 'tokens' ? 'tokens seen' : 'wall time (s)';
}

/**
 * Debiased EMA of `values` with weight w ∈ [0, 1): s_i = (w·m_{i−1} + (1−w)·v_i) / (1 − wⁱ⁺¹).
 * Non-finite values pass through as NaN and do not disturb the average. w = 0 copies.
 */
export function smoothEma(
  values: ArrayLike<number>,
  w: number,
  out: Float64Array = new Float64Array(values.length),
): Float64Array {
  const weight = Math.min(Math.max(w, 0), 0.999);
  let m = 0;
  let norm = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v)) {
      out[i] = Number.NaN;
      continue;
    }
    m = weight * m + (1 - weight) * v;
    norm = weight * norm + (1 - weight);
    out[i] = m / norm;
  }
  return out;
}

/**
 * Validation loss on the rows of `steps`: row i holds the loss of the evaluation at step
 * steps[i] (or the first row after it, when that step was not logged), null elsewhere.
 */
export function evalOnRows(
  steps: StepColumns,
  evals: readonly EvalMetrics[],
  pick: (e: EvalMetrics) => number = (e) => e.loss,
): (number | null)[] {
  const out: (number | null)[] = new Array<number | null>(steps.length).fill(null);
  for (const [row, v] of evalRows(steps, evals, pick)) out[row] = v;
  return out;
}

/** The row of each evaluation (see {@link evalOnRows}) with its value; later evaluations win a shared row. */
export function evalRows(
  steps: StepColumns,
  evals: readonly EvalMetrics[],
  pick: (e: EvalMetrics) => number = (e) => e.loss,
): Map<number, number> {
  return stepRows(steps, evals, pick);
}

/**
 * The row of each item's step (the first row at or after it) with its value, for values that
 * are finite (a run logged before bits per byte were has none); later items win a shared row.
 */
export function stepRows<T extends { readonly step: number }>(
  steps: StepColumns,
  items: readonly T[],
  pick: (e: T) => number | null | undefined,
): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of items) {
    const i = steps.indexOfStep(e.step);
    const v = pick(e);
    if (i < steps.length && typeof v === 'number' && Number.isFinite(v)) out.set(i, v);
  }
  return out;
}

/** Smallest and largest finite values (for log-scale checks and axis ranges); null when none. */
export function finiteRange(values: ArrayLike<number | null>): { min: number; max: number } | null {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'number' && Number.isFinite(v)) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  return min <= max ? { min, max } : null;
}

/** Number of finite values (what a line actually draws). */
export function countFinite(values: ArrayLike<number | null>): number {
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'number' && Number.isFinite(v)) n++;
  }
  return n;
}

/**
 * Rows to draw when there are far more points than pixels: the rows are cut into `buckets`
 * runs of consecutive rows, and each run keeps its first row and the rows of its smallest and
 * largest `y` (min/max decimation: every spike stays visible, the line's envelope is exact at
 * the bucket's resolution). `keep` rows (e.g. evaluations) are always included. Returns
 * increasing row indices; all rows when n ≤ 3·buckets.
 */
export function decimateRows(y: ArrayLike<number>, buckets: number, keep: readonly number[] = []): Uint32Array {
  const n = y.length;
  if (n <= 3 * buckets) return Uint32Array.from({ length: n }, (_, i) => i);
  const rows: number[] = [];
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * n) / buckets);
    const hi = Math.floor(((b + 1) * n) / buckets);
    let iMin = lo;
    let iMax = lo;
    for (let i = lo + 1; i < hi; i++) {
      const v = y[i] as number;
      if (v < (y[iMin] as number) || !Number.isFinite(y[iMin] as number)) iMin = i;
      if (v > (y[iMax] as number) || !Number.isFinite(y[iMax] as number)) iMax = i;
    }
    rows.push(lo, iMin, iMax);
  }
  rows.push(n - 1, ...keep.filter((k) => k >= 0 && k < n));
  rows.sort((a, b) => a - b);
  const out: number[] = [];
  for (const r of rows) if (out.length === 0 || out[out.length - 1] !== r) out.push(r);
  return Uint32Array.from(out);
}

/** The values of `column` at `rows`. */
export function gather(column: ArrayLike<number>, rows: Uint32Array): Float64Array {
  const out = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = column[rows[i] as number] as number;
  return out;
}

/** A sparse column (values at some rows, null elsewhere) at `rows`. */
export function gatherSparse(values: ReadonlyMap<number, number>, rows: Uint32Array): (number | null)[] {
  return Array.from(rows, (r) => values.get(r) ?? null);
}
