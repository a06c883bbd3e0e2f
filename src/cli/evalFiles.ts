/**
 * `attention-lab eval --run DIR --data GLOB…` and `--pairs SRC TGT | --pairs FILE`: a thin
 * adapter over lab/evaluation/evaluateFiles.ts that parses the test-data, decoding
 * (`--strategy`, `--beam`, `--length-penalty`), BLEU (`--bleu-tokenize`) and `--out` flags,
 * refuses data of the wrong kind for the run (naming the flag to use), and prints the result
 * as one JSON object (`--json`) or a table, with notes for skipped files, unseen characters,
 * pairs left out and a capped number of decodes on stderr. The lab records the evaluation in
 * the run's evaluations.jsonl.
 *
 * Leaves out: the evaluation itself (lab/evaluation/evaluateFiles.ts) and `eval` on the run's
 * own validation set (eval.ts).
 */

import * as path from 'node:path';
import {
  formatBitsPerByte,
  formatBleu,
  formatCount,
  formatDecoding,
  formatLoss,
  formatPercent,
  formatPerplexity,
} from '../common/format';
import { DEFAULT_MAX_PAIRS, evaluateFiles } from '../lab/evaluation/evaluateFiles';
import { openRun } from '../lab/inference/openRun';
import { collectDocuments } from '../lab/data/globFiles.node';
import { NODE_FS } from '../lab/files/fs.node';
import { RUN_FILES, readRunJson } from '../lab/runs/runFolder';
import type { ModelKind } from '../protocol/data';
import type { EvalDecoding } from '../protocol/evaluation';
import { BLEU_TOKENIZE, EVAL_STRATEGIES } from '../protocol/evaluation';
import type { EvalFilesData, EvalFilesOutput } from '../protocol/modelWorker';
import { summarizeSkipped } from '../protocol/data';
import type { Flags } from './args';
import { UsageError } from './args';
import type { CommandContext } from './context';
import { backendOf } from './runFlags';

/** The test data the flags name, checked against the run's kind. */
function testData(f: Flags, ctx: CommandContext, kind: ModelKind): EvalFilesData {
  if (f.has('data') && f.has('pairs')) {
    throw new UsageError(
      'Use one kind of test data: --data GLOB… (documents) or --pairs SRC TGT / --pairs FILE (pairs), not both.',
    );
  }
  if (f.has('data')) {
    if (kind === 'encoder-decoder')
      throw new UsageError(
        'This run is an encoder-decoder: evaluate it on test pairs with --pairs SRC TGT or --pairs ' +
          'FILE.tsv|.jsonl, not --data.',
      );
    const mb = (name: string): number | undefined =>
      f.has(name) ? Math.round(f.num(name, 1, 0.001, 2 ** 20) * 2 ** 20) : undefined;
    return {
      kind: 'documents',
      paths: [...f.list('data'), ...f.positionals],
      cwd: ctx.cwd,
      glob: true,
      maxFileBytes: mb('max-file-mb'),
      maxTotalBytes: mb('max-total-mb'),
    };
  }
  if (kind === 'decoder-only')
    throw new UsageError(
      'This run is a decoder-only language model: evaluate it on text files with --data GLOB…, not --pairs.',
    );
  if (f.positionals.length > 1)
    throw new UsageError(`--pairs takes SRC TGT or one FILE; got extra "${f.positionals[1]}".`);
  const target = f.positionals[0];
  return {
    kind: 'pairs',
    source: path.resolve(ctx.cwd, f.str('pairs') as string),
    target: target === undefined ? null : path.resolve(ctx.cwd, target),
  };
}

/** The decoding the flags ask for (greedy unless --strategy beam). */
export function decodingOf(f: Flags): EvalDecoding {
  const strategy = f.choice('strategy', EVAL_STRATEGIES, 'greedy');
  if (strategy === 'greedy') {
    if (f.has('beam') || f.has('length-penalty'))
      throw new UsageError('--beam and --length-penalty are for beam search: add --strategy beam.');
    return { strategy };
  }
  return { strategy, beam: f.int('beam', 4, 1, 64), lengthPenalty: f.num('length-penalty', 0.6, 0, 5) };
}

/** The `--json` object: the keys of `eval` (loss, ppl, bpb, exact_match, bleu) and what was scored. */
function jsonOf(r: EvalFilesOutput): Record<string, unknown> {
  const common = {
    source: r.source,
    step: r.step,
    context: r.context,
    loss: r.loss,
    ppl: r.ppl,
    bpb: r.bpb,
    tokens: r.tokens,
    bytes: r.bytes,
    characters: r.characters,
    unseen_chars: r.unseenChars,
    unseen_examples: r.unseenExamples,
    data_hash: r.record.dataHash,
  };
  const t = r.translation;
  if (r.kind === 'documents' || !t) return { ...common, documents: r.documents, skipped: r.skipped };
  const decoding =
    t.decoding.strategy === 'beam'
      ? { strategy: 'beam', beam: t.decoding.beam, length_penalty: t.decoding.lengthPenalty }
      : { strategy: 'greedy' };
  return {
    ...common,
    pairs: r.pairs,
    pairs_too_long: r.pairsTooLong,
    sources_cut: r.sourcesCut,
    decoded: t.decoded,
    exact_match: t.exactMatch,
    bleu: t.bleu,
    bleu_signature: t.bleuSignature,
    bleu_tokenize_reason: r.bleuTokenizeReason,
    chrf: t.chrf,
    chrf_signature: t.chrfSignature,
    decoding,
    ...(r.record.hypothesesFile !== undefined ? { hypotheses_file: r.record.hypothesesFile } : {}),
  };
}

function printTable(r: EvalFilesOutput, ctx: CommandContext): void {
  const rows: [string, string][] = [
    ['test data', r.source],
    ['step', `${r.step} (context ${r.context} tokens)`],
    ['loss', `${formatLoss(r.loss)} nats/token`],
    ['bits/byte', `${formatBitsPerByte(r.bpb)} (${formatCount(r.bytes)} bytes of text)`],
    ['perplexity', formatPerplexity(r.ppl)],
    ['tokens', formatCount(r.tokens)],
  ];
  const t = r.translation;
  if (r.kind === 'documents' || !t)
    rows.push([
      'documents',
      `${r.documents}${r.skipped.length ? ` (${r.skipped.length} skipped: ${summarizeSkipped(r.skipped)})` : ''}`,
    ]);
  else {
    rows.push(['pairs', `${r.pairs}${r.pairsTooLong ? ` (${r.pairsTooLong} longer than the context, left out)` : ''}`]);
    rows.push([
      'decoding',
      `${formatDecoding(t.decoding)}` +
        `${t.decoding.strategy === 'greedy' ? ' (the default; --strategy beam for beam search)' : ''}`,
    ]);
    rows.push(['exact match', `${formatPercent(t.exactMatch)} of ${formatCount(t.decoded)} decoded`]);
    rows.push([
      'BLEU',
      `${formatBleu(t.bleu)}  ${t.bleuSignature}${r.bleuTokenizeReason ? ` (${r.bleuTokenizeReason})` : ''}`,
    ]);
    rows.push(['chrF', `${formatBleu(t.chrf)}  ${t.chrfSignature}`]);
    if (r.record.hypothesesFile !== undefined) rows.push(['hypotheses', r.record.hypothesesFile]);
  }
  for (const [k, v] of rows) ctx.out(`${k.padEnd(12)} ${v}`);
}

/** Notes on stderr about what was left out or is doubtful. */
function printNotes(r: EvalFilesOutput, ctx: CommandContext, maxPairs: number): void {
  if (r.unseenChars) {
    const pct = formatPercent(r.unseenChars / Math.max(1, r.characters));
    ctx.err(
      `warning: ${formatCount(r.unseenChars)} of ${formatCount(r.characters)} characters (${pct}) ` +
        `never occur in the run's training data (e.g. ` +
        `${r.unseenExamples.map((c) => JSON.stringify(c)).join(', ')}); the model never trained on their tokens.`,
    );
  }
  if (r.skipped.length)
    ctx.err(
      `note: skipped ${r.skipped.length} ${r.skipped.length === 1 ? 'file' : 'files'} ` +
        `(${summarizeSkipped(r.skipped)}): ` +
        r.skipped
          .slice(0, 5)
          .map((s) => s.path)
          .join(', ') +
        (r.skipped.length > 5 ? ', …' : ''),
    );
  if (r.pairsTooLong)
    ctx.err(
      `note: left out ${r.pairsTooLong} ${r.pairsTooLong === 1 ? 'pair' : 'pairs'} longer than the ` +
        `context of ${r.context} tokens.`,
    );
  const inFile = r.pairs + r.pairsTooLong;
  if (r.translation && r.translation.decoded < inFile)
    ctx.err(
      `note: exact match, BLEU and chrF cover the first ${r.translation.decoded} of the ${inFile} ` +
        `pairs (--max-pairs ${maxPairs}).`,
    );
  if (r.sourcesCut)
    ctx.err(
      `note: ${r.sourcesCut} ${r.sourcesCut === 1 ? 'source was' : 'sources were'} longer than the ` +
        `context of ${r.context} tokens and decoded from ${r.sourcesCut === 1 ? 'its' : 'their'} ` +
        `first ${r.context} tokens.`,
    );
}

/** `eval --run DIR --data GLOB… | --pairs …`: resolves to the exit code. */
export async function evalFilesCommand(f: Flags, ctx: CommandContext, runDir: string): Promise<number> {
  const run = await readRunJson(NODE_FS, runDir);
  const data = testData(f, ctx, run.config.kind);
  const maxPairs = f.int('max-pairs', DEFAULT_MAX_PAIRS);
  const decoding = decodingOf(f);
  const tokenize = f.has('bleu-tokenize') ? f.choice('bleu-tokenize', BLEU_TOKENIZE, '13a') : null;
  const outFlag = f.str('out');
  if (data.kind === 'documents' && (outFlag !== undefined || f.has('strategy') || tokenize !== null)) {
    throw new UsageError(
      "--out, --strategy and --bleu-tokenize are for test pairs (an encoder-decoder's decodes); " +
        'documents are scored by loss only.',
    );
  }
  const json = f.bool('json');
  // Batches as wide as training's, within reason: the model's buffers are planned for them.
  const rows = Math.max(1, Math.min(run.spec.training.batchSize, 32));
  const opened = await openRun(NODE_FS, runDir, backendOf(f), rows);
  const live = !json && ctx.stderr.isTTY;
  const out = outFlag === undefined ? {} : { hypothesesFile: path.resolve(ctx.cwd, outFlag) };
  try {
    // Printed before the lab records it, so a folder that refuses the record loses no result.
    const onResult = (r: EvalFilesOutput): void => {
      if (live) ctx.stderr.write('\r\x1b[2K');
      if (json) ctx.out(JSON.stringify(jsonOf(r)));
      else printTable(r, ctx);
      printNotes(r, ctx, maxPairs);
    };
    await evaluateFiles(NODE_FS, opened, data, {
      maxPairs,
      collectGlobs: collectDocuments,
      decoding,
      tokenize,
      ...out,
      onResult,
      ...(live
        ? {
            onProgress: (done: number, total: number): unknown =>
              ctx.stderr.write(`\r\x1b[2Kevaluating ${done}/${total}`),
          }
        : {}),
    });
  } finally {
    if (live) ctx.stderr.write('\r\x1b[2K');
  }
  if (!json) ctx.err(`Recorded in ${path.join(runDir, RUN_FILES.evaluations)}.`);
  return 0;
}
