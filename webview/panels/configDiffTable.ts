/**
 * The curves tab's compare table for the compared runs: first what every comparison shows
 * (tokenizer, vocabulary, validation loss per token and per byte, the latest evaluations on
 * test sets they share: runComparison.ts), then what differs between their settings
 * (configDiff.ts), or a line saying they share every setting.
 *
 * Leaves out: computing the rows (runComparison.ts, configDiff.ts).
 */

import { configDiff } from './configDiff';
import type { DiffRow } from './configDiff';
import { h } from '../base/dom';
import type { ComparedRun } from './runComparison';
import { comparisonRows } from './runComparison';
import type { RunEntry } from '../store';

/** What the table reads of a run in the store. */
export function comparedRun(r: RunEntry): ComparedRun {
  return { summary: r.summary, evals: r.evals, evaluations: r.evaluations };
}

function table(id: string, runs: readonly ComparedRun[], rows: readonly DiffRow[], first: string): HTMLElement {
  const head = h(
    'tr',
    {},
    h('th', { attrs: { scope: 'col' } }, first),
    ...runs.map((r) => h('th', { attrs: { scope: 'col' } }, r.summary.name)),
  );
  const body = rows.map((row) =>
    h('tr', {}, h('th', { attrs: { scope: 'row' } }, row.key), ...row.values.map((v) => h('td', {}, v))),
  );
  return h('table', { className: 'config-diff', attrs: { id } }, h('thead', {}, head), h('tbody', {}, ...body));
}

/** The tables (empty for fewer than two runs). */
export function configDiffTable(runs: readonly ComparedRun[]): HTMLElement[] {
  if (runs.length < 2) return [];
  const rows = configDiff(runs.map((r) => r.summary));
  return [
    h('h3', { className: 'config-diff-title' }, 'Compared runs'),
    table('run-comparison', runs, comparisonRows(runs), 'measure'),
    h('h3', { className: 'config-diff-title' }, 'What differs between the compared runs'),
    rows.length === 0
      ? h('p', { className: 'note' }, 'Their model, training settings, backend and data are the same.')
      : table('config-diff', runs, rows, 'setting'),
  ];
}
