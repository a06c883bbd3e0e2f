/**
 * `attention-lab eval --run DIR --data GLOB…` and `--pairs SRC TGT | --pairs FILE`: a thin
 * adapter over lab/evaluation/evaluateFiles.ts that parses the test-data flags, refuses data of the
 * wrong kind for the run (naming the flag to use), and prints the result as one JSON object
 * (`--json`) or a table, with notes for skipped files, unseen characters, pairs left out
 * and a capped number of decodes on stderr.
 *
 * Leaves out: the evaluation itself (lab/evaluation/evaluateFiles.ts) and `eval` on the run's own
 * validation set (eval.ts).
 */

import * as path from 'node:path';
import { formatBleu, formatCount, formatLoss, formatPercent, formatPerplexity } from '../common/format';
import { DEFAULT_MAX_PAIRS, evaluateFiles } from '../lab/evaluation/evaluateFiles';
import { openRun } from '../lab/runs/openRun';
import { readRunJson } from '../lab/runs/runFolder';
import type { ModelKind } from '../protocol/data';
import type { EvalFilesData, EvalFilesOutput } from '../protocol/modelWorker';
import { summarizeSkipped } from '../protocol/data';
import type { Flags } from './args';
import { UsageError } from './args';
import type { CommandContext } from './context';
import { backendOf } from './runFlags';

/** The test data the flags name, checked against the run's kind. */
function testData(f: Flags, ctx: CommandContext, kind: ModelKind): EvalFilesData {
  if (f.has('data') && f.has('pairs')) {
    throw new UsageError('Use one kind of test data: --data GLOB… (documents) or --pairs SRC TGT / --pairs FILE (pairs), not both.');
  }
  if (f.has('data')) {
    if (kind === 'encoder-decoder') throw new UsageError('This run is an encoder-decoder: evaluate it on test pairs with --pairs SRC TGT or --pairs FILE.tsv|.jsonl, not --data.');
    const mb = (name: string): number | undefined => (f.has(name) ? Math.round(f.num(name, 1, 0.001, 2 ** 20) * 2 ** 20) : undefined);
    return { kind: 'documents', paths: [...f.list('data'), ...f.positionals], cwd: ctx.cwd, glob: true, maxFileBytes: mb('max-file-mb'), maxTotalBytes: mb('max-total-mb') };
  }
  if (kind === 'decoder-only') throw new UsageError('This run is a decoder-only language model: evaluate it on text files with --data GLOB…, not --pairs.');
  if (f.positionals.length > 1) throw new UsageError(`--pairs takes SRC TGT or one FILE; got extra "${f.positionals[1]}".`);
  const target = f.positionals[0];
  return { kind: 'pairs', source: path.resolve(ctx.cwd, f.str('pairs') as string), target: target === undefined ? null : path.resolve(ctx.cwd, target) };
}

/** The `--json` object: the keys of `eval` (loss, ppl, exact_match, bleu) and what was scored. */
function jsonOf(r: EvalFilesOutput): Record<string, unknown> {
  const common = { source: r.source, step: r.step, context: r.context, loss: r.loss, ppl: r.ppl, tokens: r.tokens, characters: r.characters, unseen_chars: r.unseenChars, unseen_examples: r.unseenExamples };
  return r.kind === 'documents'
    ? { ...common, documents: r.documents, skipped: r.skipped }
    : { ...common, pairs: r.pairs, pairs_too_long: r.pairsTooLong, decoded: r.decoded, exact_match: r.exactMatch, bleu: r.bleu };
}

function printTable(r: EvalFilesOutput, ctx: CommandContext): void {
  const rows: [string, string][] = [
    ['test data', r.source],
    ['step', `${r.step} (context ${r.context} tokens)`],
    ['loss', `${formatLoss(r.loss)} nats/token`],
    ['perplexity', formatPerplexity(r.ppl)],
    ['tokens', formatCount(r.tokens)],
  ];
  if (r.kind === 'documents') rows.push(['documents', `${r.documents}${r.skipped.length ? ` (${r.skipped.length} skipped: ${summarizeSkipped(r.skipped)})` : ''}`]);
  else {
    rows.push(['pairs', `${r.pairs}${r.pairsTooLong ? ` (${r.pairsTooLong} longer than the context, left out)` : ''}`]);
    rows.push(['exact match', `${formatPercent(r.exactMatch)} of ${formatCount(r.decoded)} decoded`]);
    rows.push(['BLEU', formatBleu(r.bleu)]);
  }
  for (const [k, v] of rows) ctx.out(`${k.padEnd(12)} ${v}`);
}

/** Notes on stderr about what was left out or is doubtful. */
function printNotes(r: EvalFilesOutput, ctx: CommandContext, maxPairs: number): void {
  if (r.unseenChars) {
    const pct = formatPercent(r.unseenChars / Math.max(1, r.characters));
    ctx.err(`warning: ${formatCount(r.unseenChars)} of ${formatCount(r.characters)} characters (${pct}) never occur in the run's training data (e.g. ${r.unseenExamples.map((c) => JSON.stringify(c)).join(', ')}); the model never trained on their tokens.`);
  }
  if (r.skipped.length) ctx.err(`note: skipped ${r.skipped.length} ${r.skipped.length === 1 ? 'file' : 'files'} (${summarizeSkipped(r.skipped)}): ${r.skipped.slice(0, 5).map((s) => s.path).join(', ')}${r.skipped.length > 5 ? ', …' : ''}`);
  if (r.pairsTooLong) ctx.err(`note: left out ${r.pairsTooLong} ${r.pairsTooLong === 1 ? 'pair' : 'pairs'} longer than the context of ${r.context} tokens.`);
  if (r.decoded < r.pairs) ctx.err(`note: exact match and BLEU cover the first ${r.decoded} of ${r.pairs} pairs (--max-pairs ${maxPairs}); the loss covers all of them.`);
}

/** `eval --run DIR --data GLOB… | --pairs …`: resolves to the exit code. */
export async function evalFilesCommand(f: Flags, ctx: CommandContext, runDir: string): Promise<number> {
  const run = readRunJson(runDir);
  const data = testData(f, ctx, run.config.kind);
  const maxPairs = f.int('max-pairs', DEFAULT_MAX_PAIRS);
  const json = f.bool('json');
  // Batches as wide as training's, within reason: the model's buffers are planned for them.
  const rows = Math.max(1, Math.min(run.spec.training.batchSize, 32));
  const opened = openRun(runDir, backendOf(f), rows);
  const live = !json && ctx.stderr.isTTY;
  let r: EvalFilesOutput;
  try {
    r = await evaluateFiles(opened, data, { maxPairs, ...(live ? { onProgress: (done: number, total: number): unknown => ctx.stderr.write(`\r\x1b[2Kevaluating ${done}/${total}`) } : {}) });
  } finally {
    if (live) ctx.stderr.write('\r\x1b[2K');
  }
  if (json) ctx.out(JSON.stringify(jsonOf(r)));
  else printTable(r, ctx);
  printNotes(r, ctx, maxPairs);
  return 0;
}
