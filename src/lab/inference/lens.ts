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
 * Leaves out: the encoder's stream (it never meets the unembedding), tuned lenses (a learned
 * map per layer), and inputs longer than the context, which are refused.
 */

import { EngineError } from '../../engine/errors';
import type { Batch } from '../../engine/models/transformer';
import { BOS, EOS, PAD } from '../../engine/tokenizers/special';
import type { OpenRun } from '../openRun';
import { greedyTarget } from './decode';

/** What the lens (or an ablated prediction) reads: a prompt (decoder-only) or a source and optional target (encoder-decoder). */
export type LensInput = { readonly prompt: string } | { readonly src: string; readonly tgt?: string };

/** One candidate next token. */
export interface TopToken {
  readonly token: string;
  readonly prob: number;
}

/** The grid: per layer (0 = embeddings … N), per decoder position, the top-k next tokens. */
export interface LensOutput {
  /** The decoder's input tokens (position t predicts the token after tokens[t]). */
  readonly tokens: readonly string[];
  /** The source tokens of an encoder-decoder, else absent. */
  readonly src?: readonly string[];
  readonly layers: readonly { readonly layer: number; readonly positions: readonly { readonly top: readonly TopToken[] }[] }[];
}

/** Most tokens a lens or prediction shows per position. */
export const MAX_TOP_K = 50;

/** The one-sequence batch of `input` for `r`'s model (targets: the input shifted, then PAD or EOS). */
export function inputBatch(r: OpenRun, input: LensInput): Batch {
  const { model, tok } = r;
  const tooLong = (what: string, n: number, L: number): never => {
    throw new EngineError('input/invalid', `${what} of ${n} tokens exceeds the context of ${L}; shorten it or retrain with a longer context.`);
  };
  if (model.config.kind === 'encoder-decoder') {
    if (!('src' in input)) throw new EngineError('input/invalid', 'This run is an encoder-decoder: give a source (and optionally a target), not a prompt.');
    const src = tok.encode(input.src, { eos: true });
    if (src.length > model.maxSrcLen) tooLong('Source (with EOS)', src.length, model.maxSrcLen);
    const body = input.tgt !== undefined ? Array.from(tok.encode(input.tgt)) : greedyTarget(model, src).slice(0, model.maxLen - 1);
    if (body.length + 1 > model.maxLen) tooLong('Target (with BOS)', body.length + 1, model.maxLen);
    const ids = Int32Array.of(BOS, ...body);
    return { B: 1, T: ids.length, input: ids, targets: Int32Array.of(...ids.subarray(1), EOS), S: src.length, src };
  }
  if (!('prompt' in input)) throw new EngineError('input/invalid', 'This run is a decoder-only model: give a prompt, not a source.');
  const ids = Int32Array.of(BOS, ...tok.encode(input.prompt));
  if (ids.length > model.maxLen) tooLong('Prompt (with BOS)', ids.length, model.maxLen);
  return { B: 1, T: ids.length, input: ids, targets: Int32Array.of(...ids.subarray(1), PAD) };
}

/** The k most probable tokens of softmax(logits[row]) (computed in float64 after subtracting the row max). */
export function topTokens(r: OpenRun, logits: ArrayLike<number>, row: number, k: number): TopToken[] {
  const V = r.model.config.vocabSize;
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[row * V + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[row * V + v] as number) - max);
  const top: { id: number; p: number }[] = [];
  for (let v = 0; v < V; v++) {
    const p = Math.exp((logits[row * V + v] as number) - max) / sum;
    if (top.length < k || p > (top[top.length - 1] as { p: number }).p) {
      top.push({ id: v, p });
      top.sort((a, b) => b.p - a.p || a.id - b.id);
      if (top.length > k) top.pop();
    }
  }
  return top.map((t) => ({ token: r.tok.tokenText(t.id), prob: t.p }));
}

function checkTopK(topK: number): void {
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) throw new EngineError('input/invalid', `top-k must be a whole number from 1 to ${MAX_TOP_K}, got ${topK}.`);
}

/** The logit lens of `input` (see the file comment): one forward, then every layer read out. */
export function logitLens(r: OpenRun, input: LensInput, opts: { readonly topK: number }): LensOutput {
  checkTopK(opts.topK);
  const batch = inputBatch(r, input);
  r.model.forward(batch, { train: false, labelSmoothing: 0 });
  const layers: LensOutput['layers'][number][] = [];
  for (let layer = 0; layer <= r.model.config.nDecoderLayers; layer++) {
    const logits = r.model.residualLogits(layer);
    layers.push({ layer, positions: Array.from({ length: batch.T }, (_, t) => ({ top: topTokens(r, logits, t, opts.topK) })) });
  }
  const tokens = Array.from(batch.input, (id) => r.tok.tokenText(id));
  return batch.src ? { tokens, src: Array.from(batch.src, (id) => r.tok.tokenText(id)), layers } : { tokens, layers };
}
