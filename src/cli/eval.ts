/**
 * `attention-lab eval`: loss, perplexity and bits per byte and, for source→target runs, exact
 * match, BLEU and chrF of a run on its own validation set, through the lab's one evaluation
 * (lab/evaluation/evaluateValidation.ts), which records it in the run's evaluations.jsonl.
 * On test files (--data, --pairs) it hands over to evalFiles.ts.
 *
 * Leaves out: the evaluation itself (src/lab/evaluation) and test files (evalFiles.ts).
 */

import * as path from 'node:path';
import {
  formatBitsPerByte,
  formatBleu,
  formatDecoding,
  formatLoss,
  formatPercent,
  formatPerplexity,
} from '../common/format';
import type { ValidationEvaluation } from '../lab/evaluation/evaluateValidation';
import { evaluateValidation } from '../lab/evaluation/evaluateValidation';
import { NODE_FS } from '../lab/files/fs.node';
import { RUN_FILES } from '../lab/runs/runFolder';
import { BLEU_TOKENIZE } from '../protocol/evaluation';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { decodingOf, evalFilesCommand } from './evalFiles';
import { BACKEND_FLAG, RUN_FLAG, backendOf, runDirOf } from './runFlags';

export const EVAL_HELP = `attention-lab eval --run DIR [test data] [options] [--json]
  Loss (mean negative log-likelihood in nats, no label smoothing), perplexity and bits per
  byte (loss × tokens / (UTF-8 bytes of the text scored × ln 2): compares runs whose
  tokenizers differ); for source→target runs also exact match, sacreBLEU's corpus BLEU and
  chrF of decodes of at most --max-pairs pairs (default 1000). Every evaluation is appended
  to DIR/evaluations.jsonl (when, the files with their sizes and hashes, the metrics, the
  decoding, the step), which the dashboard, the compare table and the report show.
Test data (default: the run's own validation set):
  --data GLOB…           documents the run never saw (decoder-only runs). Each document is
                         BOS + text + EOS in one stream, cut into non-overlapping windows of
                         the model's context from the first token, as the validation loss
                         is: every token is scored once, so the loss compares with the run's.
  --max-file-mb N  --max-total-mb N   size limits of the test documents (as train's)
  --pairs SRC TGT        parallel line files (encoder-decoder runs), or
  --pairs FILE           a .tsv (src<TAB>tgt) or .jsonl ({"src","tgt"}) file. Pairs longer
                         than the context are left out and counted.
  Test text whose characters are more than 5% unknown to a char tokenizer is refused.
Decoding and scoring of pairs:
  --strategy greedy|beam greedy (the default) or beam search  --beam N (4)  --length-penalty A (0.6)
  --bleu-tokenize ${BLEU_TOKENIZE.join('|')}
                         BLEU's tokenizer (sacreBLEU's names); default: zh when the references
                         are Chinese, char when Japanese (sacreBLEU's ja-mecab needs MeCab), 13a
                         otherwise. The signature (nrefs:1|case:mixed|eff:no|tok:…) says which.
  --out FILE             write the decodes, one per line in test order (score them with
                         sacrebleu REF -i FILE --tokenize TOK to check)
  --json                 one object: loss, ppl, bpb, tokens, bytes, source, documents | pairs,
                         exact_match, bleu, bleu_signature, chrf, chrf_signature, decoding, …`;

/** The flags of `eval`. */
const EVAL_FLAGS = {
  ...RUN_FLAG,
  'max-pairs': { type: 'string' },
  data: { type: 'string', multiple: true },
  pairs: { type: 'string' },
  'max-file-mb': { type: 'string' },
  'max-total-mb': { type: 'string' },
  out: { type: 'string' },
  strategy: { type: 'string' },
  beam: { type: 'string' },
  'length-penalty': { type: 'string' },
  'bleu-tokenize': { type: 'string' },
  ...BACKEND_FLAG,
} as const;

/** `eval`. */
export async function evalCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('eval', argv, EVAL_FLAGS, 64);
  if (f.bool('help')) return ctx.help(EVAL_HELP);
  const runDir = runDirOf(f, ctx, 'eval');
  if (f.has('data') || f.has('pairs')) return evalFilesCommand(f, ctx, runDir);
  if (f.positionals.length)
    throw new UsageError(
      `unexpected argument "${f.positionals[0]}"; pass test documents with --data GLOB… or test ` +
        `pairs with --pairs SRC TGT.`,
    );
  const out = f.str('out');
  // Printed before the lab records it, so a folder that refuses the record loses no result.
  await evaluateValidation(NODE_FS, runDir, backendOf(f), {
    maxPairs: f.int('max-pairs', 1000),
    decoding: decodingOf(f),
    tokenize: f.has('bleu-tokenize') ? f.choice('bleu-tokenize', BLEU_TOKENIZE, '13a') : null,
    ...(out !== undefined ? { hypothesesFile: path.resolve(ctx.cwd, out) } : {}),
    onResult: (r) => printValidation(r, f.bool('json'), ctx),
  });
  if (!f.bool('json')) ctx.err(`Recorded in ${path.join(runDir, RUN_FILES.evaluations)}.`);
  return 0;
}

/** The result of `eval` on the validation split: one JSON object, or two lines. */
function printValidation(r: ValidationEvaluation, json: boolean, ctx: CommandContext): void {
  const t = r.translation;
  if (json) {
    ctx.out(
      JSON.stringify({
        step: r.step,
        loss: r.loss,
        ppl: r.ppl,
        bpb: r.bpb,
        tokens: r.tokens,
        bytes: r.bytes,
        ...(t
          ? {
              exact_match: t.exactMatch,
              bleu: t.bleu,
              bleu_signature: t.bleuSignature,
              chrf: t.chrf,
              chrf_signature: t.chrfSignature,
              decoding: t.decoding,
            }
          : {}),
      }),
    );
    return;
  }
  ctx.out(
    `step ${r.step}  validation loss ${formatLoss(r.loss)}  perplexity ${formatPerplexity(r.ppl)}  ` +
      `bits/byte ${formatBitsPerByte(r.bpb)}`,
  );
  if (t)
    ctx.out(
      `exact match ${formatPercent(t.exactMatch)}  BLEU ${formatBleu(t.bleu)} (${t.bleuSignature})  ` +
        `chrF ${formatBleu(t.chrf)}  · ${formatDecoding(t.decoding)} decodes`,
    );
}
