/**
 * The commands that use a trained run: `eval` (validation loss, perplexity, exact match,
 * BLEU; on test files through evalFiles.ts), `decode` (greedy, beam, sampling), `score`
 * (per-token log-probabilities: which tokens surprised the model) and `tokenize`.
 */

import * as path from 'node:path';
import { createBackend } from '../engine/backends/select';
import { beamSearch } from '../engine/decode/beam';
import { greedyDecode } from '../engine/decode/greedy';
import { sampleDecode } from '../engine/decode/sample';
import type { DecodeResult } from '../engine/decode/stepperContract';
import { EngineError } from '../engine/errors';
import { createStepper } from '../engine/models/stepper';
import { Rng } from '../engine/rng';
import { BOS, EOS } from '../engine/tokenizers/special';
import { formatBleu, formatLoss, formatPercent, formatPerplexity } from '../format';
import { evaluate } from '../lab/evaluate';
import type { OpenRun } from '../lab/openRun';
import { openRun } from '../lab/openRun';
import { buildDataset, loadRunData, readTokenizer } from '../lab/prepare';
import { readRunJson } from '../lab/runFolder';
import { windowLogprobs } from '../lab/score';
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
  --json   one object: {"text", "tokens", "logprobs", "score", ...}`;

/** `decode`. */
export function decodeCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('decode', argv, {
    run: { type: 'string' }, prompt: { type: 'string' }, src: { type: 'string' }, strategy: { type: 'string' }, beam: { type: 'string' },
    'length-penalty': { type: 'string' }, temperature: { type: 'string' }, 'top-k': { type: 'string' }, 'top-p': { type: 'string' },
    'max-tokens': { type: 'string' }, seed: { type: 'string' }, ...BACKEND,
  });
  if (f.bool('help')) return ctx.help(DECODE_HELP);
  const r = openRun(runDirOf(f, ctx, 'decode'), createBackend(f.choice('backend', ['auto', 'wasm', 'reference'] as const, 'auto')), 1);
  const strategy = f.choice('strategy', ['greedy', 'beam', 'sample'] as const, 'greedy');
  const beam = f.int('beam', 4, 1, 64);
  const encdec = r.model.config.kind === 'encoder-decoder';
  const input = encdec ? f.str('src') ?? f.str('prompt') : f.str('prompt');
  if (input === undefined) throw new UsageError(encdec ? 'This run is an encoder-decoder: pass the source with --src TEXT.' : 'This run is a decoder-only model: pass --prompt TEXT.');
  if (!encdec && f.has('src')) throw new UsageError('--src is for encoder-decoder runs; this one is decoder-only, so use --prompt.');
  let prompt: Int32Array;
  let src: Int32Array | undefined;
  if (encdec) {
    src = r.tok.encode(input, { eos: true });
    if (src.length > r.model.maxSrcLen) throw new EngineError('input/invalid', `Source of ${src.length} tokens exceeds the context of ${r.model.maxSrcLen}; shorten it or retrain with a longer context (--seq).`);
    prompt = Int32Array.of(BOS);
  } else prompt = r.tok.encode(input, { bos: true });
  const stepper = createStepper(r.model, r.model.backendOrThrow(), { maxRows: strategy === 'beam' ? beam : 1, ...(src ? { src } : {}) });
  const maxTokens = f.int('max-tokens', 100);
  let results: DecodeResult[];
  if (strategy === 'greedy') results = [greedyDecode(stepper, prompt, { maxTokens, eos: EOS })];
  else if (strategy === 'beam') results = beamSearch(stepper, prompt, { maxTokens, eos: EOS, beamSize: beam, lengthPenalty: f.num('length-penalty', 0.6, 0) });
  else {
    results = [sampleDecode(stepper, prompt, {
      maxTokens, eos: EOS, temperature: f.num('temperature', 1, 0), topK: f.int('top-k', 0, 0), topP: f.num('top-p', 1, 0, 1),
      rng: new Rng(f.int('seed', 1, -2147483648, 2147483647)),
    })];
  }
  const textOf = (d: DecodeResult): string => r.tok.decode(d.tokens[d.tokens.length - 1] === EOS ? d.tokens.slice(0, -1) : d.tokens, { skipSpecial: true });
  const best = results[0] as DecodeResult;
  if (f.bool('json')) {
    ctx.out(JSON.stringify({
      text: textOf(best), tokens: best.tokens, token_text: best.tokens.map((t) => r.tok.tokenText(t)), logprobs: best.logprobs, score: best.score,
      stop_reason: best.stopReason, strategy, ...(strategy === 'beam' ? { beams: results.map((d) => ({ text: textOf(d), score: d.score })) } : {}),
    }));
  } else ctx.out(encdec ? textOf(best) : input + textOf(best));
  return 0;
}

export const SCORE_HELP = `attention-lab score --run DIR (--text TEXT | --src TEXT --tgt TEXT) [--json]
  Per-token log-probabilities. Decoder-only: ids = BOS + tokens of TEXT, logprobs[i] = log p(ids[i+1] | ids[0..i]).
  Encoder-decoder: tgt_ids = BOS + tokens of TGT + EOS, logprobs[i] = log p(tgt_ids[i+1] | src, tgt_ids[0..i]).`;

/** Log-probabilities of each next token of `ids` under the run's model (one forward pass). */
export function scoreIds(r: OpenRun, ids: Int32Array, src?: Int32Array): number[] {
  const T = ids.length - 1;
  const limit = r.model.maxLen;
  if (T > limit) throw new EngineError('input/invalid', `Text of ${ids.length} tokens exceeds the context of ${limit + 1}; shorten it.`);
  if (src && src.length > r.model.maxSrcLen) throw new EngineError('input/invalid', `Source of ${src.length} tokens exceeds the context of ${r.model.maxSrcLen}; shorten it.`);
  return windowLogprobs(r, ids, 0, T, src);
}

/** `score`. */
export function scoreCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('score', argv, { run: { type: 'string' }, text: { type: 'string' }, src: { type: 'string' }, tgt: { type: 'string' }, ...BACKEND });
  if (f.bool('help')) return ctx.help(SCORE_HELP);
  const r = openRun(runDirOf(f, ctx, 'score'), createBackend(f.choice('backend', ['auto', 'wasm', 'reference'] as const, 'auto')), 1);
  let out: Record<string, unknown>;
  let ids: Int32Array;
  let logprobs: number[];
  if (r.model.config.kind === 'encoder-decoder') {
    const s = f.str('src');
    const t = f.str('tgt');
    if (s === undefined || t === undefined) throw new UsageError('This run is an encoder-decoder: pass --src TEXT and --tgt TEXT.');
    const src = r.tok.encode(s, { eos: true });
    ids = r.tok.encode(t, { bos: true, eos: true });
    logprobs = scoreIds(r, ids, src);
    out = { src_ids: Array.from(src), tgt_ids: Array.from(ids), logprobs };
  } else {
    const text = f.str('text');
    if (text === undefined) throw new UsageError('This run is a decoder-only model: pass --text TEXT.');
    ids = r.tok.encode(text, { bos: true });
    logprobs = scoreIds(r, ids);
    out = { ids: Array.from(ids), logprobs };
  }
  if (f.bool('json')) ctx.out(JSON.stringify(out));
  else {
    ctx.out('token            log p     surprise');
    logprobs.forEach((lp, i) => ctx.out(`${JSON.stringify(r.tok.tokenText(ids[i + 1] as number)).padEnd(16)} ${lp.toFixed(3).padStart(8)}  ${'▇'.repeat(Math.min(30, Math.round(-lp * 3)))}`));
    const total = logprobs.reduce((a, b) => a + b, 0);
    ctx.out(`total ${total.toFixed(3)} nats · perplexity ${formatPerplexity(Math.exp(-total / Math.max(1, logprobs.length)))}`);
  }
  return 0;
}

export const TOKENIZE_HELP = `attention-lab tokenize --run DIR --text TEXT [--json]
  The token ids and token strings of TEXT under the run's tokenizer.`;

/** `tokenize`. */
export function tokenizeCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('tokenize', argv, { run: { type: 'string' }, text: { type: 'string' } });
  if (f.bool('help')) return ctx.help(TOKENIZE_HELP);
  const tok = readTokenizer(runDirOf(f, ctx, 'tokenize'));
  const text = f.str('text');
  if (text === undefined) throw new UsageError('`tokenize` needs --text TEXT.');
  const ids = tok.encode(text);
  const tokens = Array.from(ids, (id) => tok.tokenText(id));
  if (f.bool('json')) ctx.out(JSON.stringify({ ids: Array.from(ids), tokens, vocab_size: tok.vocabSize, type: tok.type }));
  else {
    ctx.out(`${ids.length} tokens (${tok.type} tokenizer, vocabulary ${tok.vocabSize})`);
    ctx.out(tokens.map((t, i) => `${t}:${ids[i]}`).join(' '));
  }
  return 0;
}
