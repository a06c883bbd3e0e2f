/**
 * The tables the dashboard exports, from what its store holds: the metrics of the shown run
 * and the runs compared with it, and every head score of a run's snapshots — written by the one
 * CSV writer (src/csv.ts) that `attention-lab report --csv` and `heads --csv` use, so the file
 * is the same from the editor, the report page and the command line.
 *
 * Also the names exported files are proposed under: `run-what-step120.png`, made of letters,
 * digits, `-` and `_` only and short enough for the host's check (src/protocol/webview.ts).
 *
 * Leaves out: the menu and saving (exportMenu.ts).
 */

import { headScoreRowsOf, headScoresCsv, metricsCsv } from '../src/csv';
import type { ExportKind } from '../src/protocol/webview';
import type { RunEntry } from './store';

/** One record per (run, logged step) of `runs`, in the order given (see metricsCsv). */
export function runsMetricsCsv(runs: readonly RunEntry[]): string {
  return metricsCsv(runs.map((r) => ({ name: r.summary.name, steps: r.steps.toMetrics(), evals: r.evals })));
}

/** Every head's scores at every snapshot of `run` that has them (1-based layer and head). */
export function runHeadScoresCsv(run: RunEntry): string {
  return headScoresCsv(headScoreRowsOf(run.snapshots));
}

/** A file-name part from free text (a run name, a chart title): letters, digits, `-` and `_`, at most `max` characters. */
export function fileSlug(s: string, max = 48): string {
  return s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\w-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '').slice(0, max).replace(/-$/, '') || 'export';
}

/** `run-what-step120.kind` (the step left out when null); at most 48 + 1 + 48 + 16 + 4 characters, within the host's 120. */
export function exportFileName(runName: string, what: string, step: number | null, kind: ExportKind): string {
  return `${fileSlug(runName)}-${fileSlug(what)}${step === null ? '' : `-step${Math.max(0, Math.floor(step))}`}.${kind}`;
}
