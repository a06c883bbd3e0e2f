/**
 * CSV as every front door writes it — the dashboard's "Save metrics as CSV" and "Export CSV"
 * of head scores, `attention-lab report --csv` and `attention-lab heads --csv` — so the same run
 * gives the same file from the editor, the report page and the command line.
 *
 * RFC 4180: fields separated by commas, records by CRLF, a field quoted (with `"` doubled)
 * when it holds a comma, a quote, a line break or leading/trailing spaces. Numbers are written
 * in JavaScript's shortest round-trip form (`String(x)`: 0.1 stays 0.1, 3e-7 stays 3e-7), so
 * reading a file back gives the very numbers that were logged; a missing or non-finite value is
 * an empty field (spreadsheets read it as blank, pandas as NaN).
 *
 * Pure and free of Node and DOM: part of the common layer (src/common/, test/unit/layers.test.ts),
 * which the webview and the CLI may both import.
 *
 * Leaves out: CSV dialects (semicolons, other line ends) and spreadsheet formula escaping —
 * the tables here hold run names, numbers and fixed labels, never user text in a leading cell.
 */

import type { EvalMetrics, StepMetrics } from '../protocol/data';
import type { HeadScoreData } from '../protocol/model';

/** One cell: text, a number, or nothing. */
export type CsvCell = string | number | null | undefined;

/** One field, quoted when it must be. */
export function csvField(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** A whole table: the header, then one record per row, each line ended by CRLF. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [header.map(csvField).join(',')];
  for (const r of rows) lines.push(r.map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Reads CSV written by {@link toCsv} (or any RFC 4180 file) into rows of strings; quoted
 * fields may hold commas, doubled quotes and line breaks. A final line break ends the last
 * record rather than starting an empty one.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/** What {@link metricsCsv} needs of one run: its name and what metrics.jsonl holds. */
export interface MetricsOfRun {
  readonly name: string;
  readonly steps: readonly StepMetrics[];
  readonly evals: readonly EvalMetrics[];
}

/**
 * The metrics of one or more runs, one record per (run, logged step) — runs in the order
 * given, steps ascending — with the evaluation of that step on the same record (an evaluation
 * at a step that was not logged gets a record of its own, train columns empty). Columns:
 * step, run, train loss, val loss, val perplexity, lr, grad norm, tokens (this step),
 * tokens/s, elapsed (s) as the worker's clock logged it, and exact match / BLEU when any
 * evaluation has them.
 */
export function metricsCsv(runs: readonly MetricsOfRun[]): string {
  const evals = runs.flatMap((r) => r.evals);
  const hasExact = evals.some((e) => e.exactMatch !== null);
  const hasBleu = evals.some((e) => e.bleu !== null);
  const header = [
    'step',
    'run',
    'train loss',
    'val loss',
    'val perplexity',
    'lr',
    'grad norm',
    'tokens',
    'tokens/s',
    'elapsed (s)',
    ...(hasExact ? ['exact match'] : []),
    ...(hasBleu ? ['bleu'] : []),
  ];
  const rows: CsvCell[][] = [];
  for (const run of runs) {
    const byStep = new Map<number, { s?: StepMetrics; e?: EvalMetrics }>();
    for (const s of run.steps) byStep.set(s.step, { s });
    for (const e of run.evals) byStep.set(e.step, { ...byStep.get(e.step), e });
    for (const step of [...byStep.keys()].sort((a, b) => a - b)) {
      const { s, e } = byStep.get(step) as { s?: StepMetrics; e?: EvalMetrics };
      rows.push([
        step,
        run.name,
        s?.loss,
        e?.loss,
        e?.ppl,
        s?.lr,
        s?.gradNorm,
        s?.tokens,
        s?.tokensPerSec,
        s === undefined ? null : s.elapsedMs / 1000,
        ...(hasExact ? [e?.exactMatch] : []),
        ...(hasBleu ? [e?.bleu] : []),
      ]);
    }
  }
  return toCsv(header, rows);
}

/** One head as a table row shows it: 1-based layer and head, as the dashboard and the CLI label them. */
export interface HeadScoreRow {
  /** The snapshot step the scores were measured at (null: not known, e.g. ablation only). */
  readonly step: number | null;
  readonly stack: HeadScoreData['stack'];
  readonly layer: number;
  readonly head: number;
  /** Under grouped-query attention, the key/value head (from 1) this query head reads. */
  readonly kvGroup?: number;
  readonly scores?: Readonly<Partial<Record<HeadScoreName, number>>>;
  /** Validation loss with this head switched off, minus the loss with every head on. */
  readonly deltaLoss?: number;
}

/** Every score a head can have, in the order the columns list them. */
export const HEAD_SCORE_NAMES = [
  'previousToken',
  'firstToken',
  'diagonal',
  'antiDiagonal',
  'induction',
  'entropy',
] as const;
export type HeadScoreName = (typeof HEAD_SCORE_NAMES)[number];

/**
 * The head-score table: step, stack, layer, head (both from 1), kvGroup (from 1) when any row has
 * it (grouped-query attention), then every score (empty where a head's kind has none:
 * cross-attention has no induction, self-attention no anti-diagonal) and, when any row has it,
 * delta loss.
 */
export function headScoresCsv(rows: readonly HeadScoreRow[]): string {
  const ablated = rows.some((r) => r.deltaLoss !== undefined);
  const grouped = rows.some((r) => r.kvGroup !== undefined);
  const header = [
    'step',
    'stack',
    'layer',
    'head',
    ...(grouped ? ['kvGroup'] : []),
    ...HEAD_SCORE_NAMES,
    ...(ablated ? ['deltaLoss'] : []),
  ];
  return toCsv(
    header,
    rows.map((r) => [
      r.step,
      r.stack,
      r.layer,
      r.head,
      ...(grouped ? [r.kvGroup] : []),
      ...HEAD_SCORE_NAMES.map((n) => r.scores?.[n]),
      ...(ablated ? [r.deltaLoss] : []),
    ]),
  );
}

/** The head-score rows of snapshots (1-based), one per (snapshot step, head), steps ascending. */
export function headScoreRowsOf(
  snapshots: readonly { readonly step: number; readonly headScores?: readonly HeadScoreData[] }[],
): HeadScoreRow[] {
  return snapshots.flatMap((s) =>
    (s.headScores ?? []).map((h) => ({
      step: s.step,
      stack: h.stack,
      layer: h.layer + 1,
      head: h.head + 1,
      ...(h.kvGroup !== undefined ? { kvGroup: h.kvGroup + 1 } : {}),
      scores: h.scores,
    })),
  );
}
