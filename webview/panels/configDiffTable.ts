/**
 * The curves tab's table of what differs between the compared runs' settings (configDiff.ts),
 * or a line saying they share every setting.
 *
 * Leaves out: computing the differences (configDiff.ts).
 */

import type { RunSummary } from '../../src/protocol/webview';
import { configDiff } from '../configDiff';
import { h } from '../dom';

/** The table (or a line saying the runs share every setting); empty for fewer than two runs. */
export function configDiffTable(runs: readonly RunSummary[]): HTMLElement[] {
  if (runs.length < 2) return [];
  const rows = configDiff(runs);
  const title = h('h3', { className: 'config-diff-title' }, 'What differs between the compared runs');
  if (rows.length === 0) return [title, h('p', { className: 'note' }, 'Their model, training settings, backend and data are the same.')];
  const head = h('tr', {}, h('th', { attrs: { scope: 'col' } }, 'setting'), ...runs.map((r) => h('th', { attrs: { scope: 'col' } }, r.name)));
  const body = rows.map((row) => h('tr', {}, h('th', { attrs: { scope: 'row' } }, row.key), ...row.values.map((v) => h('td', {}, v))));
  return [title, h('table', { className: 'config-diff', attrs: { id: 'config-diff' } }, h('thead', {}, head), h('tbody', {}, ...body))];
}
