/**
 * The commands that use a trained run: `eval` (validation loss, perplexity, exact match,
 * BLEU; on test files through evalFiles.ts), `decode` (greedy, beam, sampling), `score`
 * (per-token log-probabilities: which tokens surprised the model) and `tokenize`. Each is
 * an adapter: it parses flags, calls the lab's one implementation of the job
 * (lab/evaluation/evaluate.ts, lab/inference/: decode and score are the ones the extension's model
 * worker calls too) and prints the result.
 */

import * as path from 'node:path';
import { createBackend } from '../engine/backends/select';
import { formatBleu, formatLoss, formatPercent, formatPerplexity } from '../common/format';
import { evaluate } from '../lab/evaluation/evaluate';
import { decodeText } from '../lab/inference/decode';
import type { ScoredText } from '../lab/inference/score';
import { MAX_SCORED_TOKENS, scoreText } from '../lab/inference/score';
import { openRun } from '../lab/runs/openRun';
import { tokenLabels } from '../engine/tokenizers/tokenDisplay';
import { isPartialLabel } from '../common/tokenLabels';
import { buildDataset, loadRunData, readTokenizer } from '../lab/training/prepare';
import { readRunJson } from '../lab/runs/runFolder';
import type { DecodeParams } from '../protocol/model';
import { UsageError, parseFlags } from './args';
import type { Flags } from './args';
import type { CommandContext } from './context';
import { evalFilesCommand } from './evalFiles';

function runDirOf(f: Flags, ctx: CommandContext, command: string): string {
  const run = f.str('run');
  if (!run) throw new UsageError(`\`${command}\` needs --run DIR (a folder that \`attention-lab train\` created).`);
  return path.resolve(ctx.cwd, run);
}

const BACKEND = { backend: { type: 'string' } } as const;

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
  const f = parseFlags('eval', argv, { run: { type: 'string' }, 'max-pairs': { type: 'string' }, data: { type: 'string', multiple: true }, pairs: { type: 'string' }, 'max-file-mb': { type: 'string' }, 'max-total-mb': { type: 'string' }, ...BACKEND }, 64);
  if (f.bool('help')) return ctx.help(EVAL_HELP);
  const runDir = runDirOf(f, ctx, 'eval');
  if (f.has('data') || f.has('pairs')) return evalFilesCommand(f, ctx, runDir);
  if (f.positionals.length) throw new UsageError(`unexpected argument "${f.positionals[0]}"; pass test documents with --data GLOB… or test pairs with --pairs SRC TGT.`);
  const run = readRunJson(runDir);
  const tok = readTokenizer(runDir);
  const data = await loadRunData(run.spec, tok, { need: 'validation' });
  const { dataset } = buildDataset(run.spec, data, run.config.maxLen);
  const opened = openRun(runDir, createBackend(f.choice('backend', ['auto', 'wasm', 'reference'] as const, 'auto')), dataset.maxBatch);
  const r = evaluate(opened.model, dataset, tok, { maxPairs: f.int('max-pairs', 1000) });
  if (f.bool('json')) {
    ctx.out(JSON.stringify({ loss: r.loss, ppl: r.ppl, ...(r.exactMatch !== null ? { exact_match: r.exactMatch, bleu: r.bleu } : {}) }));
  } else {
    ctx.out(`step ${opened.step}  validation loss ${formatLoss(r.loss)}  perplexity ${formatPerplexity(r.ppl)}`);
    if (r.exactMatch !== null) ctx.out(`exact match ${formatPercent(r.exactMatch)}  BLEU ${formatBleu(r.bleu)}`);
  }
  return 0;
}

export const DECODE_HELP = `attention-lab decode --run DIR (--prompt TEXT | --src TEXT) [options]
  --strategy greedy|beam|sample (default greedy)   --beam N (4)   --length-penalty A (0.6)
  --temperature T (1)   --top-k K (0 = off)   --top-p P (1 = off)   --max-tokens N (100)   --seed N
  --json   one object: {"text", "tokens", "logprobs", "score", ...}
  Greedy and sampling go past the model's context with a sliding window (the model sees the
  last half to whole context); beam search stops at the context. Either way a note on stderr
  (--json: "context_note") says so.`;

/** `decode`: flags → the lab's decode (as the playground runs it) → text or JSON. */
export function decodeCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('decode', argv, {
    run: { type: 'string' }, prompt: { type: 'string' }, src: { type: 'string' }, strategy: { type: 'string' }, beam: { type: 'string' },
    'length-penalty': { type: 'string' }, temperature: { type: 'string' }, 'top-k': { type: 'string' }, 'top-p': { type: 'string' },
    'max-tokens': { type: 'string' }, seed: { type: 'string' }, ...BACKEND,
  });
  if (f.bool('help')) return ctx.help(DECODE_HELP);
  const r = openRun(runDirOf(f, ctx, 'decode'), createBackend(f.choice('backend', ['auto', 'wasm', 'reference'] as const, 'auto')), 1);
  const encdec = r.model.config.kind === 'encoder-decoder';
  const input = encdec ? f.str('src') ?? f.str('prompt') : f.str('prompt');
  if (input === undefined) throw new UsageError(encdec ? 'This run is an encoder-decoder: pass the source with --src TEXT.' : 'This run is a decoder-only model: pass --prompt TEXT.');
  if (!encdec && f.has('src')) throw new UsageError('--src is for encoder-decoder runs; this one is decoder-only, so use --prompt.');
  const params: DecodeParams = {
    input, strategy: f.choice('strategy', ['greedy', 'beam', 'sample'] as const, 'greedy'), beam: f.int('beam', 4, 1, 64), lengthPenalty: f.num('length-penalty', 0.6, 0),
    temperature: f.num('temperature', 1, 0), topK: f.int('top-k', 0, 0), topP: f.num('top-p', 1, 0, 1), maxTokens: f.int('max-tokens', 100),
    seed: f.int('seed', 1, -2147483648, 2147483647),
  };
  const { output: d } = decodeText(r, params);
  if (f.bool('json')) {
    ctx.out(JSON.stringify({
      text: d.text, tokens: d.ids, token_text: d.tokens, logprobs: d.logprobs, score: d.score,
      stop_reason: d.stopReason, strategy: params.strategy, ...(params.strategy === 'beam' ? { beams: d.beams } : {}),
      ...(d.contextNote !== undefined ? { context_note: d.contextNote } : {}),
    }));
  } else ctx.out(encdec ? d.text : input + d.text);
  if (d.contextNote !== undefined) ctx.err(d.contextNote); // stderr, so the text on stdout stays clean
  return 0;
}

export const SCORE_HELP = `attention-lab score --run DIR (--text TEXT | --src TEXT --tgt TEXT) [--json]
  Per-token log-probabilities, by the rule the editor's Score Selection uses too:
  Decoder-only: ids = BOS + tokens of TEXT (no EOS: the text is scored as it stands, not as
  a whole document), logprobs[i] = log p(ids[i+1] | ids[0..i]).
  Encoder-decoder: tgt_ids = BOS + tokens of TGT + EOS (the end is scored, as training
  scores it), logprobs[i] = log p(tgt_ids[i+1] | src, tgt_ids[0..i]); SRC must fit the context.
  Longer than the context: sliding windows of the context, each ending half a context after
  the one before and scoring only its new tokens, so every token is scored once with at
  least half a context before it (the first window's with all there is). Never refused for
  its length; past ${MAX_SCORED_TOKENS} tokens the rest is left out (--json: "truncated").
  --json   one object: {"ids", "logprobs"} or {"src_ids", "tgt_ids", "logprobs"}`;

/** `score`: flags → the lab's scoring (as Score Selection runs it) → a table or JSON. */
export function scoreCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('score', argv, { run: { type: 'string' }, text: { type: 'string' }, src: { type: 'string' }, tgt: { type: 'string' }, ...BACKEND });
  if (f.bool('help')) return ctx.help(SCORE_HELP);
  const r = openRun(runDirOf(f, ctx, 'score'), createBackend(f.choice('backend', ['auto', 'wasm', 'reference'] as const, 'auto')), 1);
  let scored: ScoredText;
  if (r.model.config.kind === 'encoder-decoder') {
    const s = f.str('src');
    const t = f.str('tgt');
    if (s === undefined || t === undefined) throw new UsageError('This run is an encoder-decoder: pass --src TEXT and --tgt TEXT.');
    scored = scoreText(r, s, t);
  } else {
    const text = f.str('text');
    if (text === undefined) throw new UsageError('This run is a decoder-only model: pass --text TEXT.');
    scored = scoreText(r, null, text);
  }
  const { output, ids, src } = scored;
  const { logprobs, truncated } = output;
  if (truncated > 0) ctx.err(`Scored the first ${MAX_SCORED_TOKENS} tokens; the ${truncated} after them were left out.`);
  if (f.bool('json')) {
    const cut = truncated > 0 ? { truncated } : {};
    ctx.out(JSON.stringify(src ? { src_ids: Array.from(src), tgt_ids: Array.from(ids), logprobs, ...cut } : { ids: Array.from(ids), logprobs, ...cut }));
  } else {
    ctx.out('token            log p     surprise');
    logprobs.forEach((lp, i) => ctx.out(`${JSON.stringify(output.tokens[i]).padEnd(16)} ${lp.toFixed(3).padStart(8)}  ${'▇'.repeat(Math.min(30, Math.round(-lp * 3)))}`));
    const total = logprobs.reduce((a, b) => a + b, 0);
    ctx.out(`total ${total.toFixed(3)} nats · perplexity ${formatPerplexity(Math.exp(-total / Math.max(1, logprobs.length)))}`);
  }
  return 0;
}

export const TOKENIZE_HELP = `attention-lab tokenize --run DIR --text TEXT [--json]
  The token ids of TEXT under the run's tokenizer, each labelled as the dashboard labels it:
  its text (· space, ↵ newline, → tab), a character split across tokens written in each
  token that holds some of its bytes with … where it continues (映 as E6 98 | A0 reads
  "映…" then "…映"), <0xNN> only for bytes that form no character.
  --json   {"ids", "tokens", "bytes" (each token's bytes in hex, "" for a special token), "vocab_size", "type"}`;

/** `tokenize`. */
export function tokenizeCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('tokenize', argv, { run: { type: 'string' }, text: { type: 'string' } });
  if (f.bool('help')) return ctx.help(TOKENIZE_HELP);
  const tok = readTokenizer(runDirOf(f, ctx, 'tokenize'));
  const text = f.str('text');
  if (text === undefined) throw new UsageError('`tokenize` needs --text TEXT.');
  const ids = tok.encode(text);
  const tokens = tokenLabels(tok, ids);
  const hex = (id: number): string => Array.from(tok.tokenBytes(id) ?? [], (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
  if (f.bool('json')) ctx.out(JSON.stringify({ ids: Array.from(ids), tokens, bytes: Array.from(ids, hex), vocab_size: tok.vocabSize, type: tok.type }));
  else {
    ctx.out(`${ids.length} tokens (${tok.type} tokenizer, vocabulary ${tok.vocabSize})`);
    ctx.out(tokens.map((t, i) => `${t}:${ids[i]}`).join(' '));
    const split = tokens.flatMap((t, i) => (isPartialLabel(t) ? [`${t} = ${hex(ids[i] as number)}`] : []));
    if (split.length) ctx.out(`split characters (… where a character continues in the next or previous token): ${split.join(', ')}`);
  }
  return 0;
}
