/**
 * The tables the dashboard exports, from what its store holds: the metrics of the shown run
 * and the runs compared with it, and every head score of a run's snapshots — written by the one
 * CSV writer (src/common/csv.ts) that `attention-lab report --csv` and `heads --csv` use, so the file
 * is the same from the editor, the report page and the command line.
 *
 * Also the names exported files are proposed under: `run-what-step120.png`, made of letters,
 * digits, `-` and `_` only and short enough for the host's check (src/protocol/webview.ts).
 *
 * Leaves out: the menu and saving (exportMenu.ts).
 */

import { kvGroup, kvHeadCount } from '../../src/common/architecture';
import { headScoresCsv, metricsCsv } from '../../src/common/csv';
import type { HeadScoreRow } from '../../src/common/csv';
import type { HeadHistory } from '../charts/headHistory';
import type { ExportKind } from '../../src/protocol/webview';
import type { RunEntry } from '../store';

/** One record per (run, logged step) of `runs`, in the order given (see metricsCsv). */
export function runsMetricsCsv(runs: readonly RunEntry[]): string {
  return metricsCsv(runs.map((r) => ({ name: r.summary.name, steps: r.steps.toMetrics(), evals: r.evals })));
}

/**
 * The rows of a head-score history: one per (step, head) that the snapshot of that step scored,
 * stacks in display order, layer and head from 1; under grouped-query attention (`config` with
 * fewer key/value heads than heads) each row also says its key/value head, from 1.
 */
export function headHistoryRows(
  history: HeadHistory,
  config?: { readonly nHeads?: number; readonly nKvHeads?: number },
): HeadScoreRow[] {
  const H = config?.nHeads;
  const grouped = H !== undefined && config?.nKvHeads !== undefined && kvHeadCount(H, config.nKvHeads) !== H;
  const group = (head: number): { kvGroup?: number } =>
    grouped ? { kvGroup: kvGroup(head, H, config?.nKvHeads ?? 0) + 1 } : {};
  const rows: HeadScoreRow[] = [];
  history.steps.forEach((step, row) => {
    for (const s of history.present()) {
      for (let layer = 0; layer < s.layers; layer++) {
        for (let head = 0; head < s.heads; head++) {
          const scores: Record<string, number> = {};
          for (const [name, cols] of s.values) scores[name] = cols[layer * s.heads + head]?.[row] ?? NaN;
          // A head this snapshot did not score has NaN everywhere: leave it out.
          if (Object.values(scores).every((v) => Number.isNaN(v))) continue;
          rows.push({ step, stack: s.stack, layer: layer + 1, head: head + 1, ...group(head), scores });
        }
      }
    }
  });
  return rows;
}

/** Every head's scores at every scored step of `run` (the report's thinned-out snapshots included), 1-based. */
export function runHeadScoresCsv(run: RunEntry): string {
  return headScoresCsv(headHistoryRows(run.heads, run.summary.model?.config));
}

/**
 * A file-name part from free text (a run name, a chart title): letters, digits, `-` and `_`, at most `max` characters.
 */
export function fileSlug(s: string, max = 48): string {
  return (
    s
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/[^\w-]+/g, '-')
      .replace(/-+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, max)
      .replace(/-$/, '') || 'export'
  );
}

/**
 * `run-what-step120.kind` (the step left out when null); at most 48 + 1 + 48 + 16 + 4 characters, within the host's
 * 120.
 */
export function exportFileName(runName: string, what: string, step: number | null, kind: ExportKind): string {
  return (
    `${fileSlug(runName)}-${fileSlug(what)}` +
    `${step === null ? '' : `-step${Math.max(0, Math.floor(step))}`}.` +
    `${kind}`
  );
}
