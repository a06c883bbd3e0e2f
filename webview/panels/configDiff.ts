/**
 * "What differs" between compared runs: the model config, training settings, backend and
 * data of each run, flattened to `section.key` rows, keeping only the rows whose values are
 * not all equal. The architecture options come as named rows with readable values
 * (`architecture.positions`: "RoPE θ 10000", src/common/architecture.ts) instead of their raw
 * fields. Pure (the curves panel draws it: panels/configDiffTable.ts).
 *
 * Leaves out: which runs are compared (the curves toolbar's checkboxes) and drawing.
 */

import type { RunSummary } from '../../src/protocol/webview';
import { learningRateText } from '../../src/common/learningRate';
import { architectureRows } from '../../src/common/architecture';

/** One key whose values differ, with one value per run ('—' where a run lacks it). */
export interface DiffRow {
  readonly key: string;
  readonly values: readonly string[];
}

const ABSENT = '—';

function show(v: unknown): string {
  if (v === undefined || v === null) return ABSENT;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** The settings of a run that may differ from another's, as `key → text`. */
export function runSettings(r: RunSummary): Map<string, string> {
  const out = new Map<string, string>();
  out.set('kind', r.kind);
  out.set('steps', String(r.totalSteps));
  if (r.model) {
    const arch = architectureRows(r.model.config);
    // nHeads is a size as well: its raw row stays beside the heads' named row.
    const named = new Set<string>(arch.flatMap((a) => a.fields.filter((f) => f !== 'nHeads')));
    for (const [k, v] of Object.entries(r.model.config))
      if (k !== 'kind' && !named.has(k)) out.set(`model.${k}`, show(v));
    for (const a of arch) out.set(`architecture.${a.label}`, a.value);
    out.set('parameters', String(r.model.params));
    out.set('backend', r.model.backend);
  }
  // The rate used, not the 0 that stands for the default.
  if (r.training) {
    for (const [k, v] of Object.entries(r.training))
      if (k !== 'steps') out.set(`training.${k}`, k === 'lr' ? learningRateText(r.training) : show(v));
    // The schedule trained with, where run.json leaves it out (cosine; the paper's optimizer has its own).
    out.set('training.schedule', r.training.optimizer === 'paper' ? 'noam' : (r.training.schedule ?? 'cosine'));
  }
  if (r.data) out.set('data', r.data.description);
  return out;
}

/** Rows of the keys whose values are not the same in every run (keys in first-seen order). */
export function configDiff(runs: readonly RunSummary[]): DiffRow[] {
  const settings = runs.map(runSettings);
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const s of settings) {
    for (const k of s.keys()) {
      if (seen.has(k)) continue;
      seen.add(k);
      keys.push(k);
    }
  }
  const rows: DiffRow[] = [];
  for (const key of keys) {
    const values = settings.map((s) => s.get(key) ?? ABSENT);
    if (values.some((v) => v !== values[0])) rows.push({ key, values });
  }
  return rows;
}
