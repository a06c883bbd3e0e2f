/**
 * Head scores over training, as the Heads view and the loss curve's threshold marker read
 * them: one column of values per (stack, layer, head, score), aligned with the steps of the
 * snapshots that carried scores. A live snapshot appends one row in O(heads); a snapshot
 * retaken at the same step replaces the last row; a resume truncates. Pure (no DOM).
 *
 * Which scores a stack has comes from the protocol's schemas (src/protocol/model.ts), where
 * they are declared once; what each means is in src/engine/analysis/headScores.ts.
 *
 * Leaves out: drawing (sparkline.ts, panels/heads.ts) and the curves' marker (panels/curves.ts).
 */

import type { AttentionSnapshot, AttentionStack, HeadScoreData } from '../../src/protocol/model';
import { crossHeadScores, selfHeadScores } from '../../src/protocol/model';

/** The name of one score. */
export type ScoreName = keyof typeof selfHeadScores.fields | keyof typeof crossHeadScores.fields;

const SELF = Object.keys(selfHeadScores.fields) as ScoreName[];
const CROSS = Object.keys(crossHeadScores.fields) as ScoreName[];

/** The scores of each stack, in display order (the schema's order). */
export const STACK_SCORES: { readonly [S in AttentionStack]: readonly ScoreName[] } = {
  'decoder.self': SELF,
  'encoder.self': SELF,
  'decoder.cross': CROSS,
};

/** Stacks in display order: the decoder's self-attention first (where induction heads form). */
export const STACK_ORDER: readonly AttentionStack[] = ['decoder.self', 'encoder.self', 'decoder.cross'];

/** How people read a score's name (full, and short for a cell's rows). */
export const SCORE_LABELS: { readonly [K in ScoreName]: { readonly full: string; readonly short: string } } = {
  previousToken: { full: 'previous token', short: 'prev' },
  firstToken: { full: 'first token', short: 'first' },
  diagonal: { full: 'diagonal', short: 'diag' },
  induction: { full: 'induction', short: 'ind' },
  entropy: { full: 'entropy (nats)', short: 'ent' },
  antiDiagonal: { full: 'anti-diagonal', short: 'anti' },
};

/** Whether a score lies in [0, 1] (all but entropy, which is in nats). */
export function isFraction(score: ScoreName): boolean {
  return score !== 'entropy';
}

/** "L2H3": a head as the marker labels it (1-based, as the dashboard shows layers and heads). */
export function headName(layer: number, head: number): string {
  return `L${layer + 1}H${head + 1}`;
}

/** The score columns of one stack. */
export class StackSeries {
  /** values[score][layer · heads + head][row]; NaN where a snapshot lacked the head. */
  readonly values = new Map<ScoreName, number[][]>();
  layers = 0;
  heads = 0;

  constructor(readonly stack: AttentionStack) {
    for (const s of STACK_SCORES[stack]) this.values.set(s, []);
  }

  /** The column of one head's score (empty when unknown). */
  column(score: ScoreName, layer: number, head: number): readonly number[] {
    return this.values.get(score)?.[layer * this.heads + head] ?? [];
  }

  /** Grows to `layers` × `heads`, keeping columns (rows of new heads are NaN up to `rows`). */
  grow(layers: number, heads: number, rows: number): void {
    if (layers <= this.layers && heads <= this.heads) return;
    const L = Math.max(layers, this.layers);
    const H = Math.max(heads, this.heads);
    for (const [score, cols] of this.values) {
      const next: number[][] = [];
      for (let l = 0; l < L; l++)
        for (let h = 0; h < H; h++)
          next.push(
            l < this.layers && h < this.heads
              ? (cols[l * this.heads + h] as number[])
              : new Array<number>(rows).fill(NaN),
          );
      this.values.set(score, next);
    }
    this.layers = L;
    this.heads = H;
  }
}

/** Every stack's scores over the steps of the snapshots that had them. */
export class HeadHistory {
  readonly steps: number[] = [];
  readonly stacks = new Map<AttentionStack, StackSeries>();
  /** Whether the latest snapshot was of a selected text (Show Attention for Selection), not the probe. */
  selection = false;

  /** A history of `snapshots` plus `extra` scores of snapshots not included (a report's). */
  static of(
    snapshots: readonly AttentionSnapshot[],
    extra: readonly { step: number; heads: readonly HeadScoreData[] }[] = [],
  ): HeadHistory {
    const rows = [
      ...snapshots.flatMap((s) => (s.headScores ? [{ step: s.step, heads: s.headScores }] : [])),
      ...extra,
    ].sort((a, b) => a.step - b.step);
    const h = new HeadHistory();
    for (const r of rows) h.add(r.step, r.heads);
    h.selection = snapshots[snapshots.length - 1]?.source === 'selection';
    return h;
  }

  /** Number of rows (steps). */
  get length(): number {
    return this.steps.length;
  }

  /** Stacks present, in display order. */
  present(): StackSeries[] {
    return STACK_ORDER.flatMap((s) => {
      const x = this.stacks.get(s);
      return x && x.layers > 0 ? [x] : [];
    });
  }

  /** Appends the scores of `step` (replacing the last row when it is the same step). Steps must not decrease. */
  add(step: number, heads: readonly HeadScoreData[]): void {
    const last = this.steps[this.steps.length - 1];
    if (last !== undefined && step < last) throw new Error(`head scores of step ${step} arrived after step ${last}`);
    if (last === step) this.truncate(this.steps.length - 1);
    const row = this.steps.length;
    this.steps.push(step);
    const seen = new Set<StackSeries>();
    for (const x of heads) {
      let s = this.stacks.get(x.stack);
      if (!s) {
        s = new StackSeries(x.stack);
        this.stacks.set(x.stack, s);
      }
      s.grow(x.layer + 1, x.head + 1, row);
      seen.add(s);
      const scores = x.scores as Readonly<Record<string, number>>;
      for (const [name, cols] of s.values) (cols[x.layer * s.heads + x.head] as number[])[row] = scores[name] ?? NaN;
    }
    // Heads (or stacks) missing from this snapshot get NaN, so every column stays aligned.
    for (const s of this.stacks.values())
      for (const cols of s.values.values()) for (const c of cols) if (c.length <= row) c.push(NaN);
  }

  /** Keeps the first `rows` rows. */
  truncate(rows: number): void {
    this.steps.length = Math.min(this.steps.length, rows);
    for (const s of this.stacks.values())
      for (const cols of s.values.values()) for (const c of cols) c.length = Math.min(c.length, rows);
  }

  /** Drops the rows after `step` (a resume restarts there). */
  truncateAfter(step: number): void {
    let n = this.steps.length;
    while (n > 0 && (this.steps[n - 1] as number) > step) n--;
    this.truncate(n);
  }

  /** The row of `step`, or of the last step before it (−1 when none). */
  rowAt(step: number): number {
    let lo = 0;
    let hi = this.steps.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((this.steps[mid] as number) <= step) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  }
}

/** Where a score first reached a threshold. */
export interface Crossing {
  readonly step: number;
  readonly stack: AttentionStack;
  readonly layer: number;
  readonly head: number;
  readonly value: number;
}

/**
 * The first step at which any head of `stack` has `score` ≥ `threshold` (the head with the
 * highest value there when several do), or null when none ever does.
 */
export function firstCrossing(
  history: HeadHistory,
  stack: AttentionStack,
  score: ScoreName,
  threshold: number,
): Crossing | null {
  const s = history.stacks.get(stack);
  const cols = s?.values.get(score);
  if (!s || !cols) return null;
  for (let row = 0; row < history.length; row++) {
    let best: Crossing | null = null;
    cols.forEach((c, i) => {
      const v = c[row] as number;
      if (v >= threshold && (best === null || v > best.value))
        best = {
          step: history.steps[row] as number,
          stack,
          layer: Math.floor(i / s.heads),
          head: i % s.heads,
          value: v,
        };
    });
    if (best) return best;
  }
  return null;
}

/** The marker's label: "induction ≥ 0.5 · L2H3 · step 840". */
export function crossingLabel(score: ScoreName, threshold: string, c: Crossing): string {
  return (
    `${SCORE_LABELS[score].full.replace(' (nats)', '')} ≥ ${threshold} · ` +
    `${headName(c.layer, c.head)} · step ${c.step}`
  );
}

/** One head's scores at one row, as a table row (for the view's labels and a CSV export). */
export interface HeadRow {
  readonly stack: AttentionStack;
  readonly layer: number;
  readonly head: number;
  readonly step: number;
  readonly scores: Readonly<Partial<Record<ScoreName, number>>>;
}

/** Every head's scores at `row` (default: the latest), stacks in display order, then layer and head. */
export function headRows(history: HeadHistory, row = history.length - 1): HeadRow[] {
  const step = history.steps[row];
  if (step === undefined) return [];
  return history.present().flatMap((s) => {
    const out: HeadRow[] = [];
    for (let layer = 0; layer < s.layers; layer++) {
      for (let head = 0; head < s.heads; head++) {
        const scores: Partial<Record<ScoreName, number>> = {};
        for (const [name, cols] of s.values) scores[name] = cols[layer * s.heads + head]?.[row] ?? NaN;
        out.push({ stack: s.stack, layer, head, step, scores });
      }
    }
    return out;
  });
}
