/**
 * The logit lens (nostalgebraist 2020, "interpreting GPT: the logit lens"): what the model
 * would predict if it stopped after each layer. The decoder's residual stream after the
 * embeddings (layer 0) and after each block (1..N) is read through what the top of the
 * model goes through — the final LayerNorm of a pre-LN model, then the output projection —
 * and softmaxed; the top-k tokens of each layer and position form a layer × position grid.
 * A post-LN model has no final norm (each block ends in its own LayerNorm, whose output is
 * the stream), so its streams go through the output projection alone; the top layer is
 * then the model's own prediction in both placements (Transformer.residualLogits).
 *
 * Input: decoder-only, BOS + the prompt's tokens; encoder-decoder, the source (tokens + EOS)
 * and the decoder reading BOS + the given target, or BOS + the model's greedy translation
 * when no target is given. Position t shows the prediction of token t + 1.
 *
 * An input longer than the context is refused, unless the caller asks for it to be cut to
 * fit (the playground does, `fit`): then it is cut as the attention of a text is (attend.ts,
 * one rule for every view of a text): a decoder reads BOS and the first L − 1 tokens, a
 * source its first L − 1 tokens and EOS, and `truncation` says what is shown in the same
 * words.
 *
 * On a device (WebGPU: `logitLensAsync`) each layer's logits are read back as it is read out.
 *
 * Leaves out: the encoder's stream (it never meets the unembedding) and tuned lenses (a
 * learned map per layer).
 */

import { EngineError } from '../../engine/errors';
import type { Batch } from '../../engine/models/inputs';
import { PAD } from '../../engine/tokenizers/special';
import type { LensOutputData, TopTokenData } from '../../protocol/analysis';
import type { OpenRun } from './openRun';
import { greedyTargetSteps } from './decode';
import type { ReadSteps } from '../../engine/hostReads';
import { runReads, runReadsAsync } from '../../engine/hostReads';
import { truncationNote } from './attend';
import { unseenNote } from './unseenChars';
import { nextTokenLabel, tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import { promptIds, withBosNote } from './promptIds';

/**
 * What the lens (or an ablated prediction) reads: a prompt (decoder-only) or a source and optional target
 * (encoder-decoder).
 */
export type LensInput = { readonly prompt: string } | { readonly src: string; readonly tgt?: string };

/** One candidate next token. */
export type TopToken = TopTokenData;

/** The grid: per layer (0 = embeddings … N), per decoder position, the top-k next tokens (the protocol's shape). */
export type LensOutput = LensOutputData;

/** Most tokens a lens or prediction shows per position. */
export const MAX_TOP_K = 50;

/**
 * The one-sequence batch of `input` for `r`'s model (targets: the input shifted, then PAD or EOS); refuses what does
 * not fit.
 */
export function inputBatch(r: OpenRun, input: LensInput): Batch {
  return fittedBatch(r, input, false).batch;
}

/**
 * The one-sequence batch of `input`; with `fit`, an input longer than the context is cut to
 * it (see the file comment) and `truncation` says so, else it is refused.
 */
export function fittedBatch(r: OpenRun, input: LensInput, fit: boolean): { batch: Batch; truncation: string | null } {
  return runReads(r.model.backendOrThrow(), fittedBatchSteps(r, input, fit));
}

/** {@link fittedBatch} as a job's steps (an encoder-decoder without a target decodes one first). */
export function* fittedBatchSteps(
  r: OpenRun,
  input: LensInput,
  fit: boolean,
): ReadSteps<{ batch: Batch; truncation: string | null }> {
  const { model, tok } = r;
  const { bos, eos } = tok.specialIds;
  const tooLong = (what: string, n: number, L: number): never => {
    throw new EngineError(
      'input/invalid',
      `${what} of ${n} tokens exceeds the context of ${L}; shorten it or retrain with a longer context.`,
    );
  };
  const notes: string[] = [];
  const L = model.config.maxLen;
  /** BOS and the first L − 1 of `ids` (a decoder's input), noted. */
  const firstOf = (ids: Int32Array, what: 'Prompt' | 'Target'): Int32Array => {
    if (ids.length <= L) return ids;
    if (!fit) tooLong(`${what}${what === 'Prompt' ? withBosNote(tok) : ' (with BOS)'}`, ids.length, L);
    notes.push(truncationNote(L - 1, ids.length - 1, L, what === 'Prompt' ? 'text' : 'target'));
    return ids.slice(0, L);
  };
  if (model.config.kind === 'encoder-decoder') {
    if (!('src' in input))
      throw new EngineError(
        'input/invalid',
        'This run is an encoder-decoder: give a source (and optionally a target), not a prompt.',
      );
    let src = tok.encode(input.src, { eos: true });
    if (src.length > L) {
      if (!fit) tooLong('Source (with EOS)', src.length, L);
      notes.push(truncationNote(L - 1, src.length - 1, L, 'source'));
      src = Int32Array.of(...src.subarray(0, L - 1), eos);
    }
    const body =
      input.tgt !== undefined
        ? Array.from(tok.encode(input.tgt))
        : (yield* greedyTargetSteps(model, tok.specialIds, src, r.workspace)).slice(0, L - 1);
    const ids = firstOf(Int32Array.of(bos, ...body), 'Target');
    for (const [text, what] of [
      [input.src, 'source'],
      [input.tgt, 'target'],
    ] as const) {
      const unseen = text === undefined ? null : unseenNote(text, tok, what);
      if (unseen !== null) notes.push(unseen);
    }
    return {
      batch: { B: 1, T: ids.length, input: ids, targets: Int32Array.of(...ids.subarray(1), eos), S: src.length, src },
      truncation: notes.length ? notes.join(' ') : null,
    };
  }
  if (!('prompt' in input))
    throw new EngineError('input/invalid', 'This run is a decoder-only model: give a prompt, not a source.');
  const ids = firstOf(promptIds(tok, input.prompt), 'Prompt');
  const unseen = unseenNote(input.prompt, tok, 'prompt');
  if (unseen !== null) notes.push(unseen);
  return {
    batch: { B: 1, T: ids.length, input: ids, targets: Int32Array.of(...ids.subarray(1), PAD) },
    truncation: notes.length ? notes.join(' ') : null,
  };
}

/** softmax(logits[row]) over the vocabulary, in float64 after subtracting the row max. */
export function probsAt(r: OpenRun, logits: ArrayLike<number>, row: number): Float64Array {
  const V = r.model.config.vocabSize;
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[row * V + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[row * V + v] as number) - max);
  const p = new Float64Array(V);
  for (let v = 0; v < V; v++) p[v] = Math.exp((logits[row * V + v] as number) - max) / sum;
  return p;
}

/** Ids of the k largest of `probs`, most probable first (ties: the smaller id). */
export function topIds(probs: Float64Array, k: number): number[] {
  const top: number[] = [];
  for (let v = 0; v < probs.length; v++) {
    if (top.length < k || (probs[v] as number) > (probs[top[top.length - 1] as number] as number)) {
      top.push(v);
      top.sort((a, b) => (probs[b] as number) - (probs[a] as number) || a - b);
      if (top.length > k) top.pop();
    }
  }
  return top;
}

/**
 * The k most probable tokens of softmax(logits[row]) (ties: the smaller id), each labelled as
 * it would read after `context` (the input up to that row) — and the one that is the text's
 * own next token (`after[0]`, with the tokens after it) as the text's axis labels it, so a
 * character split across tokens reads `映…` there too, not as bytes. The numbers of probsAt
 * and topIds, without a vocabulary-sized array per row: a lens of GPT-2 reads 13 × 1,000
 * rows of 50,257.
 */
export function topTokens(
  r: OpenRun,
  logits: ArrayLike<number>,
  row: number,
  k: number,
  context: ArrayLike<number>,
  after: ArrayLike<number> = [],
): TopToken[] {
  const V = r.model.config.vocabSize;
  const base = row * V;
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[base + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[base + v] as number) - max);
  const ids: number[] = []; // the best so far, most probable first
  const at = (i: number): number => logits[base + (ids[i] as number)] as number;
  for (let v = 0; v < V; v++) {
    const x = logits[base + v] as number;
    if (ids.length === k && x <= at(k - 1)) continue;
    let i = ids.length;
    while (i > 0 && at(i - 1) < x) i--; // after equal ones: a smaller id wins a tie
    ids.splice(i, 0, v);
    if (ids.length > k) ids.pop();
  }
  const label = (id: number): string => {
    if (after.length === 0 || id !== after[0]) return nextTokenLabel(r.tok, context, id);
    const from = Math.max(0, context.length - 4);
    const seq = [
      ...Array.from({ length: context.length - from }, (_, i) => context[from + i] as number),
      ...Array.from({ length: Math.min(4, after.length) }, (_, i) => after[i] as number),
    ];
    return tokenLabels(r.tok, seq)[context.length - from] as string;
  };
  return ids.map((id) => ({ token: label(id), prob: Math.exp((logits[base + id] as number) - max) / sum }));
}

function checkTopK(topK: number): void {
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K)
    throw new EngineError('input/invalid', `top-k must be a whole number from 1 to ${MAX_TOP_K}, got ${topK}.`);
}

/**
 * The logit lens of `input` (see the file comment): one forward, then every layer read out; `fit` cuts a long input
 * instead of refusing it.
 */
export function logitLens(
  r: OpenRun,
  input: LensInput,
  opts: { readonly topK: number; readonly fit?: boolean },
): LensOutput {
  return runReads(r.model.backendOrThrow(), lensSteps(r, input, opts));
}

/** {@link logitLens} on any backend (a model on a device reads each layer's logits back). */
export function logitLensAsync(
  r: OpenRun,
  input: LensInput,
  opts: { readonly topK: number; readonly fit?: boolean },
): Promise<LensOutput> {
  return runReadsAsync(r.model.backendOrThrow(), lensSteps(r, input, opts));
}

function* lensSteps(
  r: OpenRun,
  input: LensInput,
  opts: { readonly topK: number; readonly fit?: boolean },
): ReadSteps<LensOutput> {
  checkTopK(opts.topK);
  const { batch, truncation } = yield* fittedBatchSteps(r, input, opts.fit === true);
  r.model.forward(batch, { train: false, labelSmoothing: 0, loss: false });
  const layers: LensOutput['layers'][number][] = [];
  const R = r.model.logitRows; // each layer is read in chunks of positions: [T, V] is never held whole
  for (let layer = 0; layer <= r.model.config.nDecoderLayers; layer++) {
    const positions: LensOutput['layers'][number]['positions'][number][] = [];
    for (let t0 = 0; t0 < batch.T; t0 += R) {
      const rows = Array.from({ length: Math.min(R, batch.T - t0) }, (_, i) => t0 + i);
      const logits = r.model.residualLogits(layer, 'logits', rows); // nothing reads the forward's logits after it
      yield logits;
      for (const t of rows)
        positions.push({
          top: topTokens(r, logits, t - t0, opts.topK, batch.input.subarray(0, t + 1), batch.input.subarray(t + 1)),
        });
    }
    layers.push({ layer, positions });
  }
  const tokens = tokenLabels(r.tok, batch.input);
  return {
    tokens,
    ...(batch.src ? { src: tokenLabels(r.tok, batch.src) } : {}),
    layers,
    ...(truncation !== null ? { truncation } : {}),
  };
}
