/**
 * Scoring a text with a run's model: log p(token | what precedes it) for every token (a
 * language model's log-likelihood, Bengio et al. 2003; the decoder of "Attention Is All You
 * Need" §3, conditioned on its source for an encoder-decoder), teacher-forced, with each
 * token mapped back to the characters it covers. The one implementation behind
 * `attention-lab score` and the editor's "Score Selection", so a text gets the same numbers
 * in both.
 *
 * The rule:
 * - Decoder-only: the sequence is BOS + the tokens of the text, and no EOS is appended: the
 *   text is scored as it stands (a selection is rarely a whole document, and "the document
 *   ends here" is not a property of the text), so scoring a prefix gives a prefix of the
 *   numbers, and the last one agrees with decoding.
 * - Encoder-decoder: the source (tokens + EOS) must fit the context; the target is BOS +
 *   its tokens + EOS, and EOS is scored, as training and validation score it: a target is a
 *   whole sequence, and without its end a cut-short translation would score better than
 *   the full one.
 * - Longer than the context (L positions): sliding windows, as the Hugging Face perplexity
 *   recipe slides them. The first window scores its L tokens; each next window ends
 *   ⌊L/2⌋ tokens later and scores only those, with the L − ⌊L/2⌋ tokens before them as
 *   context. Every token is scored once, never with less than half a context unless it is
 *   in the first window. Text is never refused for its length: past MAX_SCORED_TOKENS tokens
 *   the rest is left out and counted in `truncated`. (For an encoder-decoder, windows after
 *   the first start mid-target, which training never shows; targets that long are rare, as
 *   every training pair fits the context.)
 *
 * Leaves out: batching several texts, and evaluation on files (lab/evaluation/evaluateFiles.ts), whose
 * rule is the validation loss's (non-overlapping windows over BOS + text + EOS) so that its
 * loss compares with the run's.
 */

import { EngineError } from '../../engine/errors';
import type { ReadSteps } from '../../engine/hostReads';
import { runReads, runReadsAsync } from '../../engine/hostReads';
import type { Batch } from '../../engine/models/inputs';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { ScoreOutput } from '../../protocol/modelWorker';
import type { OpenRun } from './openRun';
import { tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import { promptBos } from './promptIds';

/** Most tokens one text is scored on (the rest is counted in `truncated`). */
export const MAX_SCORED_TOKENS = 20_000;

/** log softmax(logits[row])[id], computed stably (subtract the row max before exp). */
export function logSoftmaxAt(logits: ArrayLike<number>, row: number, V: number, id: number): number {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[row * V + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[row * V + v] as number) - max);
  return (logits[row * V + id] as number) - max - Math.log(sum);
}

/** log p of each target of one window, from one forward pass: inputs ids[s..e), targets ids[s+1..e+1). */
export function windowLogprobs(r: OpenRun, ids: Int32Array, s: number, e: number, src?: Int32Array): number[] {
  return runReads(r.model.backendOrThrow(), windowSteps(r, ids, s, e, src));
}

/** {@link windowLogprobs} as a job that yields the logits before it reads them (engine/hostReads.ts). */
function* windowSteps(r: OpenRun, ids: Int32Array, s: number, e: number, src?: Int32Array): ReadSteps<number[]> {
  const T = e - s;
  if (T < 1) return [];
  const batch: Batch = {
    B: 1,
    T,
    input: ids.slice(s, e),
    targets: ids.slice(s + 1, e + 1),
    ...(src ? { S: src.length, src } : {}),
  };
  // No loss: the log-probabilities are read in chunks of the model's logit rows, so a long text with a large
  // vocabulary never holds its [T, V] logits whole; each chunk is read back before it is read (a device's).
  r.model.forward(batch, { train: false, labelSmoothing: 0, loss: false });
  const V = r.model.config.vocabSize;
  const out: number[] = [];
  for (let t0 = 0; t0 < T; t0 += r.model.logitRows) {
    const n = Math.min(r.model.logitRows, T - t0);
    const logits = r.model.logitsAt(Array.from({ length: n }, (_, i) => t0 + i));
    yield logits;
    for (let i = 0; i < n; i++) out.push(logSoftmaxAt(logits, i, V, ids[s + t0 + i + 1] as number));
  }
  return out;
}

/**
 * logprobs[i] = log p(ids[i + 1] | ids[..i]) for every i, with the sliding windows of the
 * file comment (one pass when ids.length − 1 ≤ the context).
 */
export function slidingLogprobs(r: OpenRun, ids: Int32Array, src?: Int32Array): number[] {
  return runReads(r.model.backendOrThrow(), slidingSteps(r, ids, src));
}

function* slidingSteps(r: OpenRun, ids: Int32Array, src?: Int32Array): ReadSteps<number[]> {
  const n = ids.length - 1; // targets
  const L = r.model.config.maxLen;
  const stride = Math.max(1, Math.floor(L / 2));
  const logprobs: number[] = [];
  while (logprobs.length < n) {
    const end = Math.min(n, logprobs.length === 0 ? L : logprobs.length + stride);
    const start = Math.max(0, end - L);
    logprobs.push(...(yield* windowSteps(r, ids, start, end, src)).slice(logprobs.length - start));
  }
  return logprobs;
}

/**
 * UTF-16 ranges [start, end) of each token of `body` (the ids of `text`, no specials) in
 * `text`. A token whose bytes end inside a character (a byte token of a multi-byte
 * character) shares that whole character's range with the tokens that complete it.
 * Linear: only the tokens since the last character boundary are decoded at each step. The
 * space a SentencePiece tokenizer puts before the text (Llama 2's "▁" dummy prefix: the
 * tokens decode to ' ' + text) belongs to no character.
 */
export function tokenOffsets(
  tok: Tokenizer,
  body: ArrayLike<number>,
  text: string,
): { starts: number[]; ends: number[] } {
  // The dummy prefix: ranges are found in ' ' + text, then moved back by one (the space to none).
  const dummy = body.length > 0 && tok.decode(body) === ` ${text}`;
  if (dummy) {
    const { starts, ends } = offsetsIn(tok, body, ` ${text}`);
    return { starts: starts.map((x) => Math.max(0, x - 1)), ends: ends.map((x) => Math.max(0, x - 1)) };
  }
  return offsetsIn(tok, body, text);
}

function offsetsIn(tok: Tokenizer, body: ArrayLike<number>, text: string): { starts: number[]; ends: number[] } {
  const starts: number[] = [];
  const ends: number[] = [];
  const ids = Array.from(body);
  let cleanToken = 0; // first token after the last character boundary
  let cleanChar = 0; // its offset in text
  for (let i = 0; i < ids.length; i++) {
    const piece = tok.decode(ids.slice(cleanToken, i + 1));
    if (!text.startsWith(piece, cleanChar)) continue; // ends mid-character: wait for the rest
    for (let j = cleanToken; j <= i; j++) {
      starts[j] = cleanChar;
      ends[j] = cleanChar + piece.length;
    }
    cleanChar += piece.length;
    cleanToken = i + 1;
  }
  for (let j = cleanToken; j < ids.length; j++) {
    starts[j] = cleanChar;
    ends[j] = text.length;
  }
  return { starts, ends };
}

/** A scored text: the protocol's output, and the ids it was computed on. */
export interface ScoredText {
  readonly output: ScoreOutput;
  /** BOS + the scored tokens (+ EOS for an encoder-decoder target): output.logprobs[i] = log p(ids[i + 1] | …). */
  readonly ids: Int32Array;
  /** The source ids (tokens + EOS) of an encoder-decoder, else null. */
  readonly src: Int32Array | null;
}

/**
 * Scores `text` by the rule of the file comment. An encoder-decoder needs `source` (the text
 * is its target); a decoder-only model ignores it. An EOS scored at the end of a target has
 * the empty range at the end of `text`.
 */
export function scoreText(r: OpenRun, source: string | null, text: string): ScoredText {
  return runReads(r.model.backendOrThrow(), scoreSteps(r, source, text));
}

/** {@link scoreText} on any backend: a model on a device (WebGPU) reads each window's logits back once. */
export function scoreTextAsync(r: OpenRun, source: string | null, text: string): Promise<ScoredText> {
  return runReadsAsync(r.model.backendOrThrow(), scoreSteps(r, source, text));
}

function* scoreSteps(r: OpenRun, source: string | null, text: string): ReadSteps<ScoredText> {
  const { model, tok } = r;
  if (text.length === 0)
    throw new EngineError('input/invalid', 'The text to score is empty; give it at least one character.');
  const src = model.config.kind === 'encoder-decoder' ? sourceIds(r, source) : null;
  const body = tok.encode(text);
  const keep = Math.min(body.length, MAX_SCORED_TOKENS);
  const withEos = src !== null && keep === body.length; // a cut target has not reached its end
  // A target, and a prompt of a run that reads from BOS, starts at BOS (1, or GPT-2's <|endoftext|> in a vocabulary
  // loaded from its files), so every token is scored. A run whose prompts start without BOS (an imported SmolLM2,
  // Qwen, Pythia) reads the text as transformers does: its first token has nothing before it and is not scored.
  const bos = src !== null || promptBos(tok) ? 1 : 0;
  if (bos === 0 && keep < 2)
    throw new EngineError(
      'input/invalid',
      "This model's prompts start without BOS, so the first token is not scored; give a text of at least two tokens.",
    );
  const ids = new Int32Array(bos + keep + (withEos ? 1 : 0));
  if (bos === 1) ids[0] = tok.specialIds.bos;
  ids.set(body.subarray(0, keep), bos);
  if (withEos) ids[keep + bos] = tok.specialIds.eos;
  const logprobs = yield* slidingSteps(r, ids, src ?? undefined);
  const offsets = tokenOffsets(tok, body.subarray(0, keep), text);
  const starts = offsets.starts.slice(1 - bos);
  const ends = offsets.ends.slice(1 - bos);
  if (withEos) {
    starts.push(text.length);
    ends.push(text.length);
  }
  const output: ScoreOutput = {
    tokens: tokenLabels(tok, ids).slice(1),
    logprobs,
    starts,
    ends,
    truncated: body.length - keep,
  };
  return { output, ids, src };
}

function sourceIds(r: OpenRun, source: string | null): Int32Array {
  if (source === null) {
    throw new EngineError(
      'input/invalid',
      'This run is an encoder-decoder: select a line "source<TAB>target" (or "source → target") so ' +
        'the target can be scored given its source.',
    );
  }
  const src = r.tok.encode(source, { eos: true });
  if (src.length > r.model.config.maxLen)
    throw new EngineError(
      'input/invalid',
      `Source of ${src.length} tokens exceeds the context of ${r.model.config.maxLen}; shorten it ` +
        `or retrain with a longer context.`,
    );
  return src;
}
