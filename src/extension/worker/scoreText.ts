/**
 * Per-token surprise of a text under a run's model, for the editor's "Score Selection":
 * one teacher-forced forward pass gives log p(token | everything before it) for every token
 * (a language model's log-likelihood, Bengio et al. 2003; the decoder of "Attention Is All
 * You Need" §3 conditioned on a source for an encoder-decoder), and each token is mapped
 * back to the characters it covers so the editor can decorate them.
 *
 * Leaves out: encoder-decoder targets longer than the context (cut, and reported as
 * truncated) and batching several texts.
 */

import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { BOS } from '../../engine/tokenizers/special';
import type { OpenRun } from '../../lab/openRun';
import { windowLogprobs } from '../../lab/score';
import type { ScoreOutput } from '../../protocol/modelWorker';

/**
 * UTF-16 ranges [start, end) of each token of `body` (the ids of `text`, no specials) in
 * `text`. A token whose bytes end inside a character (a byte token of a multi-byte
 * character) shares that whole character's range with the tokens that complete it.
 * Linear: only the tokens since the last character boundary are decoded at each step.
 */
export function tokenOffsets(tok: Tokenizer, body: ArrayLike<number>, text: string): { starts: number[]; ends: number[] } {
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

/** Most tokens one request scores (longer texts are cut, and the rest reported as truncated). */
export const MAX_SCORED_TOKENS = 20_000;

/**
 * Scores `text`: decoder-only models score it as a continuation of BOS, past the context
 * with a sliding window (each window re-reads the second half of the previous one as
 * context and scores only new tokens, the usual way to measure a fixed-context model on
 * long text); encoder-decoders need `source` and score `text` as its target, up to the
 * context. Tokens left out are counted in `truncated`.
 */
export function scoreText(r: OpenRun, source: string | null, text: string): ScoreOutput {
  const { model, tok } = r;
  const encdec = model.config.kind === 'encoder-decoder';
  if (text.length === 0) throw new EngineError('input/invalid', 'The text to score is empty; select some text first.');
  let src: Int32Array | undefined;
  if (encdec) {
    if (source === null) {
      throw new EngineError('input/invalid', 'This run is an encoder-decoder: select a line "source<TAB>target" (or "source → target") so the target can be scored given its source.');
    }
    src = tok.encode(source, { eos: true });
    if (src.length > model.maxSrcLen) throw new EngineError('input/invalid', `The source has ${src.length} tokens but the model's context is ${model.maxSrcLen}; select a shorter source.`);
  }
  const body = tok.encode(text);
  const L = model.maxLen;
  const keep = Math.min(body.length, encdec ? L : MAX_SCORED_TOKENS);
  const ids = new Int32Array(keep + 1); // BOS + body: position t predicts ids[t + 1]
  ids[0] = BOS;
  ids.set(body.subarray(0, keep), 1);
  const logprobs: number[] = [];
  const stride = Math.max(1, Math.floor(L / 2));
  while (logprobs.length < keep) {
    const end = Math.min(keep, logprobs.length === 0 ? L : logprobs.length + stride);
    const start = Math.max(0, end - L);
    const lp = windowLogprobs(r, ids, start, end, src);
    logprobs.push(...lp.slice(logprobs.length - start));
  }
  const { starts, ends } = tokenOffsets(tok, body.subarray(0, keep), text);
  return {
    tokens: Array.from(body.subarray(0, keep), (id) => tok.tokenText(id)),
    logprobs,
    starts,
    ends,
    truncated: body.length - keep,
  };
}
