/**
 * The rows the compare table always shows for the compared runs, whatever else differs: each
 * run's tokenizer and vocabulary (a loss per token means something else for each), its latest
 * validation loss in nats per token and in bits per byte (the one axis runs of different
 * tokenizers share), and, for every test set that at least two of them were evaluated on
 * (the same files by content: the evaluation's data hash), each run's latest evaluation on it.
 * Pure (the curves panel draws it: panels/configDiffTable.ts).
 *
 * Leaves out: the settings that differ (configDiff.ts) and drawing.
 */

import {
  MISSING,
  formatBitsPerByte,
  formatBleu,
  formatCount,
  formatLoss,
  formatPercent,
} from '../../src/common/format';
import type { EvalMetrics } from '../../src/protocol/data';
import type { EvaluationRecord } from '../../src/protocol/evaluation';
import type { RunSummary } from '../../src/protocol/webview';
import type { DiffRow } from './configDiff';
import { signatureTokenizer, testDataName } from './evaluationText';

/** What the comparison reads of a run. */
export interface ComparedRun {
  readonly summary: RunSummary;
  readonly evals: readonly EvalMetrics[];
  readonly evaluations: readonly EvaluationRecord[];
}

/** A run's latest evaluation on each test set it was evaluated on, by data hash. */
function latestByData(r: ComparedRun): Map<string, EvaluationRecord> {
  const out = new Map<string, EvaluationRecord>();
  for (const e of r.evaluations) {
    const prev = out.get(e.dataHash);
    if (!prev || e.at >= prev.at) out.set(e.dataHash, e);
  }
  return out;
}

/** The rows of the metrics of the test sets that two or more runs share, in the order first seen. */
function sharedEvaluationRows(runs: readonly ComparedRun[]): DiffRow[] {
  const latest = runs.map(latestByData);
  const hashes: string[] = [];
  for (const m of latest) for (const hash of m.keys()) if (!hashes.includes(hash)) hashes.push(hash);
  const rows: DiffRow[] = [];
  for (const hash of hashes) {
    const each = latest.map((m) => m.get(hash) ?? null);
    if (each.filter((e) => e !== null).length < 2) continue;
    const name = testDataName(each.find((e) => e !== null) as EvaluationRecord);
    const row = (what: string, f: (e: EvaluationRecord) => string): DiffRow => ({
      key: `${name} · ${what}`,
      values: each.map((e) => (e ? f(e) : MISSING)),
    });
    rows.push(
      row('step', (e) => formatCount(e.step)),
      row('loss (nats/token)', (e) => formatLoss(e.loss)),
      row('bits/byte', (e) => formatBitsPerByte(e.bpb)),
    );
    if (each.some((e) => e?.translation)) {
      rows.push(
        row('BLEU', (e) =>
          e.translation
            ? `${formatBleu(e.translation.bleu)} ${signatureTokenizer(e.translation.bleuSignature)}`
            : MISSING,
        ),
        row('chrF', (e) => (e.translation ? formatBleu(e.translation.chrf) : MISSING)),
        row('exact match', (e) => (e.translation ? formatPercent(e.translation.exactMatch) : MISSING)),
      );
    }
  }
  return rows;
}

/** The rows every comparison shows (see the file comment); one value per run. */
export function comparisonRows(runs: readonly ComparedRun[]): DiffRow[] {
  const lastEval = (r: ComparedRun): EvalMetrics | undefined => r.evals[r.evals.length - 1];
  return [
    { key: 'tokenizer', values: runs.map((r) => r.summary.tokenizer?.type ?? MISSING) },
    {
      key: 'vocabulary',
      values: runs.map((r) => (r.summary.tokenizer ? `${formatCount(r.summary.tokenizer.vocabSize)} tokens` : MISSING)),
    },
    { key: 'validation loss (nats/token)', values: runs.map((r) => formatLoss(lastEval(r)?.loss ?? null)) },
    { key: 'validation bits/byte', values: runs.map((r) => formatBitsPerByte(lastEval(r)?.bpb ?? null)) },
    ...sharedEvaluationRows(runs),
  ];
}
