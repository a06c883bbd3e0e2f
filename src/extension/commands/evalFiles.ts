/**
 * The pure parts of "Attention Lab: Evaluate on Files…": which test data a list of chosen
 * files means for a run of each kind, and how the result reads in the notification and in
 * the Attention Lab log.
 *
 * Leaves out: the dialogs and progress (evaluateCommand.ts) and the evaluation itself
 * (lab/evaluation/evaluateFiles.ts, in the model worker).
 */

import type { LabFs } from '../../lab/files/labFs';
import {
  formatBitsPerByte,
  formatBleu,
  formatCount,
  formatDecoding,
  formatLoss,
  formatPercent,
  formatPerplexity,
} from '../../common/format';
import type { ModelKind } from '../../protocol/data';
import type { EvalFilesData, EvalFilesOutput } from '../../protocol/modelWorker';
import { summarizeSkipped } from '../../protocol/data';

/** Pairs decoded for exact match and BLEU (as `eval`'s default --max-pairs). */
export const EVAL_MAX_PAIRS = 1000;

/** A detected pair of parallel line files (lab/data/pairs.ts detectPairsFiles). */
export interface LinePair {
  readonly source: string;
  readonly target: string | null;
  readonly pairs: number;
}

/**
 * The files that pair line for line with `chosen` (the other side of every detected pair it
 * is in, `test.ja` beside `test.en`), with their line counts: what Evaluate on Files offers as
 * the target before a second file dialog.
 */
export function otherSides(
  candidates: readonly LinePair[],
  chosen: string,
): { readonly file: string; readonly pairs: number }[] {
  const out: { file: string; pairs: number }[] = [];
  for (const c of candidates) {
    if (c.target === null) continue;
    const other = c.source === chosen ? c.target : c.target === chosen ? c.source : null;
    if (other !== null && !out.some((o) => o.file === other)) out.push({ file: other, pairs: c.pairs });
  }
  return out;
}

/** True for a single-file pairs format (.tsv or .jsonl). */
export function isPairsFile(file: string): boolean {
  return /\.(tsv|jsonl)$/i.test(file);
}

/**
 * The test data `files` (absolute paths) make for a run of `kind`: any text files for a
 * decoder-only run (paths reported relative to `root`, else to the first file's folder);
 * one .tsv / .jsonl file, or a source and a target line file, for an encoder-decoder.
 * Returns a message saying what to choose instead when the files do not fit.
 */
export function testDataOf(
  fs: Pick<LabFs, 'dirname' | 'basename'>,
  kind: ModelKind,
  files: readonly string[],
  root: string | null,
): EvalFilesData | { readonly error: string } {
  if (files.length === 0) return { error: 'Choose at least one test file.' };
  if (kind === 'decoder-only') {
    return { kind: 'documents', paths: files, cwd: root ?? fs.dirname(files[0] as string), glob: false };
  }
  const [source, target] = files as [string, string | undefined];
  if (files.length === 1) {
    if (isPairsFile(source)) return { kind: 'pairs', source, target: null };
    return {
      error:
        `${fs.basename(source)} is not a .tsv or .jsonl file; choose one of those, or a source ` +
        `line file and then its target line file.`,
    };
  }
  if (files.length === 2 && target !== undefined) return { kind: 'pairs', source, target };
  return {
    error:
      `An encoder-decoder is evaluated on pairs: choose one .tsv / .jsonl file, or two line ` +
      `files (source, then target), not ${files.length} files.`,
  };
}

/**
 * One line for the notification: "loss 1.2346 · 1.0123 bits/byte · perplexity 3.44 · exact
 * match 12.5% · BLEU 23.46 (nrefs:1|…|tok:13a|…) · chrF 45.67 · greedy · 1,234 tokens".
 */
export function evalSummary(r: EvalFilesOutput): string {
  const parts = [
    `loss ${formatLoss(r.loss)}`,
    `${formatBitsPerByte(r.bpb)} bits/byte`,
    `perplexity ${formatPerplexity(r.ppl)}`,
  ];
  const t = r.translation;
  if (t)
    parts.push(
      `exact match ${formatPercent(t.exactMatch)}`,
      `BLEU ${formatBleu(t.bleu)} (${t.bleuSignature})`,
      `chrF ${formatBleu(t.chrf)}`,
      formatDecoding(t.decoding),
    );
  parts.push(`${formatCount(r.tokens)} tokens`);
  if (r.skipped.length) parts.push(`${r.skipped.length} ${r.skipped.length === 1 ? 'file' : 'files'} skipped`);
  if (r.pairsTooLong) parts.push(`${r.pairsTooLong} too long`);
  if (r.unseenChars) parts.push(`${r.unseenChars} unseen characters`);
  return parts.join(' · ');
}

/** The lines written to the Attention Lab log. */
export function evalLogLines(r: EvalFilesOutput): string[] {
  const lines = [
    `Evaluated step ${r.step} on ${r.source} (context ${r.context} tokens)`,
    `  loss ${formatLoss(r.loss)} nats/token · ${formatBitsPerByte(r.bpb)} bits/byte ` +
      `(${formatCount(r.bytes)} bytes) · perplexity ${formatPerplexity(r.ppl)} · ${formatCount(r.tokens)} tokens`,
  ];
  const t = r.translation;
  if (!t) lines.push(`  ${r.documents} ${r.documents === 1 ? 'document' : 'documents'} scored`);
  else {
    lines.push(
      `  ${r.pairs} pairs scored${r.pairsTooLong ? `, ${r.pairsTooLong} longer than the context left out` : ''}`,
    );
    lines.push(
      `  exact match ${formatPercent(t.exactMatch)} · BLEU ${formatBleu(t.bleu)} · chrF ${formatBleu(t.chrf)} ` +
        `(${formatDecoding(t.decoding)} decodes of ` +
        (t.decoded === r.pairs + r.pairsTooLong
          ? 'every pair'
          : `the first ${t.decoded} of ${r.pairs + r.pairsTooLong} pairs`) +
        `)`,
    );
    lines.push(`  BLEU: ${t.bleuSignature}${r.bleuTokenizeReason ? ` — ${r.bleuTokenizeReason}` : ''}`);
    lines.push(`  chrF: ${t.chrfSignature}`);
  }
  if (r.skipped.length) {
    const named = r.skipped
      .slice(0, 20)
      .map((s) => s.path)
      .join(', ');
    lines.push(
      `  skipped ${r.skipped.length} (${summarizeSkipped(r.skipped)}): ${named}${r.skipped.length > 20 ? ', …' : ''}`,
    );
  }
  if (r.unseenChars)
    lines.push(
      `  ${formatCount(r.unseenChars)} of ${formatCount(r.characters)} characters never occur in ` +
        `the training data (e.g. ${r.unseenExamples.map((c) => JSON.stringify(c)).join(', ')})`,
    );
  lines.push(`  recorded in the run's evaluations.jsonl (test data ${r.record.dataHash.slice(0, 12)}…)`);
  return lines;
}
