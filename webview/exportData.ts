/**
 * The tables the dashboard exports, from what its store holds: the metrics of the shown run
 * and the runs compared with it, and every head score of a run's snapshots — written by the one
 * CSV writer (src/csv.ts) that `attention-lab report --csv` and `heads --csv` use, so the file
 * is the same from the editor, the report page and the command line.
 *
 * Leaves out: the menu and saving (exportMenu.ts).
 */

import { headScoreRowsOf, headScoresCsv, metricsCsv } from '../src/csv';
import type { RunEntry } from './store';

/** One record per (run, logged step) of `runs`, in the order given (see metricsCsv). */
export function runsMetricsCsv(runs: readonly RunEntry[]): string {
  return metricsCsv(runs.map((r) => ({ name: r.summary.name, steps: r.steps.toMetrics(), evals: r.evals })));
}

/** Every head's scores at every snapshot of `run` that has them (1-based layer and head). */
export function runHeadScoresCsv(run: RunEntry): string {
  return headScoresCsv(headScoreRowsOf(run.snapshots));
}
