/**
 * `attention-lab eval`: validation loss, perplexity and, for source→target runs, exact
 * match and BLEU of a run on its own validation set, through the lab's one evaluation
 * (lab/evaluation/evaluate.ts, which training's evaluations run too). On test files
 * (--data, --pairs) it hands over to evalFiles.ts.
 *
 * Leaves out: the evaluation itself (src/lab/evaluation) and test files (evalFiles.ts).
 */

import { formatBleu, formatLoss, formatPercent, formatPerplexity } from '../common/format';
import { evaluate } from '../lab/evaluation/evaluate';
import { openRun } from '../lab/runs/openRun';
import { readRunJson } from '../lab/runs/runFolder';
import { buildDataset, loadRunData, readTokenizer } from '../lab/training/prepare';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { evalFilesCommand } from './evalFiles';
import { BACKEND_FLAG, RUN_FLAG, backendOf, runDirOf } from './runFlags';

export const EVAL_HELP = `attention-lab eval --run DIR [test data] [--max-pairs N] [--json]
  Loss (mean negative log-likelihood in nats, no label smoothing) and perplexity; for
  source→target runs also exact match and corpus BLEU of greedy decodes (detokenized, 13a
  tokenization as sacreBLEU) of at most --max-pairs pairs (default 1000).
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
  --json                 one object: loss, ppl, tokens, source, documents | pairs,
                         exact_match, bleu, skipped, unseen_chars, …`;

/** `eval`. */
export async function evalCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('eval', argv, { ...RUN_FLAG, 'max-pairs': { type: 'string' }, data: { type: 'string', multiple: true }, pairs: { type: 'string' }, 'max-file-mb': { type: 'string' }, 'max-total-mb': { type: 'string' }, ...BACKEND_FLAG }, 64);
  if (f.bool('help')) return ctx.help(EVAL_HELP);
  const runDir = runDirOf(f, ctx, 'eval');
  if (f.has('data') || f.has('pairs')) return evalFilesCommand(f, ctx, runDir);
  if (f.positionals.length) throw new UsageError(`unexpected argument "${f.positionals[0]}"; pass test documents with --data GLOB… or test pairs with --pairs SRC TGT.`);
  const run = readRunJson(runDir);
  const tok = readTokenizer(runDir);
  const data = await loadRunData(run.spec, tok, { need: 'validation' });
  const { dataset } = buildDataset(run.spec, data, run.config.maxLen);
  const opened = openRun(runDir, backendOf(f), dataset.maxBatch);
  const r = evaluate(opened.model, dataset, tok, { maxPairs: f.int('max-pairs', 1000) });
  if (f.bool('json')) {
    ctx.out(JSON.stringify({ loss: r.loss, ppl: r.ppl, ...(r.exactMatch !== null ? { exact_match: r.exactMatch, bleu: r.bleu } : {}) }));
  } else {
    ctx.out(`step ${opened.step}  validation loss ${formatLoss(r.loss)}  perplexity ${formatPerplexity(r.ppl)}`);
    if (r.exactMatch !== null) ctx.out(`exact match ${formatPercent(r.exactMatch)}  BLEU ${formatBleu(r.bleu)}`);
  }
  return 0;
}
