/**
 * The step metrics of one run, stored by column in growable typed arrays, so a chart of
 * 100,000 steps reads them without copying and a live step appends in O(1) (amortized).
 *
 * Two derived columns make the x-axis toggles exact: `tokensSeen` is the running sum of each
 * step's tokens (metrics.jsonl logs tokens per step), and `wallSec` is elapsed wall time that
 * stays monotonic across a resume (the worker restarts its clock: elapsedMs drops back, so the
 * new segment is shifted to continue where the old one ended).
 *
 * The logged `tokens` and `elapsedMs` are kept as they came too, so an export writes what
 * metrics.jsonl holds.
 *
 * Leaves out: evaluation metrics (few; kept as plain objects by the store) and drawing.
 */

import type { StepMetrics } from '../../src/protocol/data';

/** Column names a chart can plot. */
export type StepColumn =
  'step' | 'loss' | 'lr' | 'gradNorm' | 'tokensSeen' | 'tokensPerSec' | 'wallSec' | 'tokens' | 'elapsedMs' | 'bytes';

const COLUMNS: readonly StepColumn[] = [
  'step',
  'loss',
  'lr',
  'gradNorm',
  'tokensSeen',
  'tokensPerSec',
  'wallSec',
  'tokens',
  'elapsedMs',
  'bytes',
];

/** Growable columnar storage of StepMetrics. */
export class StepColumns {
  private cols: Record<StepColumn, Float64Array>;
  private n = 0;
  /** elapsedMs of the last pushed step, as logged (to detect a restarted clock). */
  private lastRawMs = 0;
  /** Added to elapsedMs of the current clock segment. */
  private offsetMs = 0;

  constructor(capacity = 256) {
    this.cols = StepColumns.alloc(Math.max(16, capacity));
  }

  private static alloc(cap: number): Record<StepColumn, Float64Array> {
    const out = {} as Record<StepColumn, Float64Array>;
    for (const c of COLUMNS) out[c] = new Float64Array(cap);
    return out;
  }

  /** Number of steps stored. */
  get length(): number {
    return this.n;
  }

  /** Step number of the last stored step (0 when empty). */
  get lastStep(): number {
    return this.n === 0 ? 0 : (this.cols.step[this.n - 1] as number);
  }

  /** A view (no copy) of the first `length` values of a column; valid until the next push. */
  column(name: StepColumn): Float64Array {
    return this.cols[name].subarray(0, this.n);
  }

  /** Value of a column at row i. */
  at(name: StepColumn, i: number): number {
    return this.cols[name][i] as number;
  }

  /** Appends one step (the caller checks ordering). */
  push(m: StepMetrics): void {
    if (this.n === this.cols.step.length) {
      const bigger = StepColumns.alloc(this.n * 2);
      for (const c of COLUMNS) bigger[c].set(this.cols[c]);
      this.cols = bigger;
    }
    const i = this.n;
    const prevTokens = i === 0 ? 0 : (this.cols.tokensSeen[i - 1] as number);
    if (i > 0 && m.elapsedMs < this.lastRawMs) this.offsetMs = (this.cols.wallSec[i - 1] as number) * 1000;
    this.lastRawMs = m.elapsedMs;
    this.cols.step[i] = m.step;
    this.cols.loss[i] = m.loss;
    this.cols.lr[i] = m.lr;
    this.cols.gradNorm[i] = m.gradNorm;
    this.cols.tokensSeen[i] = prevTokens + m.tokens;
    this.cols.tokensPerSec[i] = m.tokensPerSec;
    this.cols.wallSec[i] = (m.elapsedMs + this.offsetMs) / 1000;
    this.cols.tokens[i] = m.tokens;
    this.cols.elapsedMs[i] = m.elapsedMs;
    // Bytes of text the step's targets stand for; NaN in runs logged before it was recorded.
    this.cols.bytes[i] = m.bytes ?? Number.NaN;
    this.n = i + 1;
  }

  /** The steps as they were logged (what metrics.jsonl holds), e.g. for CSV export. */
  toMetrics(): StepMetrics[] {
    const c = this.cols;
    return Array.from({ length: this.n }, (_, i) => ({
      step: c.step[i] as number,
      loss: c.loss[i] as number,
      lr: c.lr[i] as number,
      gradNorm: c.gradNorm[i] as number,
      tokens: c.tokens[i] as number,
      tokensPerSec: c.tokensPerSec[i] as number,
      elapsedMs: c.elapsedMs[i] as number,
      ...(Number.isFinite(c.bytes[i]) ? { bytes: c.bytes[i] as number } : {}),
    }));
  }

  /** Drops every step after `step` (a resume from an earlier checkpoint); returns how many were dropped. */
  truncateAfter(step: number): number {
    let n = this.n;
    while (n > 0 && (this.cols.step[n - 1] as number) > step) n--;
    const dropped = this.n - n;
    this.n = n;
    if (dropped > 0) {
      // The resumed worker's clock restarts at 0: continue from the last kept wall time.
      this.lastRawMs = Number.POSITIVE_INFINITY;
      if (n === 0) this.offsetMs = 0;
    }
    return dropped;
  }

  /** Index of the first row whose step is ≥ `step` (binary search; steps are increasing), or length. */
  indexOfStep(step: number): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cols.step[mid] as number) < step) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
