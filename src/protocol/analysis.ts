/**
 * Looking inside a run's model from the playground: the logit lens (the top-k next tokens
 * read out of the decoder's residual stream after every layer, src/lab/inference/lens.ts)
 * and head ablation (next-token probabilities and loss with chosen heads switched off,
 * src/lab/inference/ablate.ts). Shared by the host ⇄ model worker channel (modelWorker.ts)
 * and the host ⇄ dashboard channel (webview.ts), which carry the same inputs and results.
 *
 * Leaves out: computing any of it (src/lab) and the messages that carry it.
 */

import type { Infer } from './schema';
import { arrayOf, nonNegInt, num, obj, optional, str, variants } from './schema';
import { attentionStack } from './model';

/**
 * What the lens and the ablation read: a prompt (decoder-only) or a source and an optional target prefix
 * (encoder-decoder).
 */
export type LensInputData = Infer<typeof lensInputData>;
export const lensInputData = variants('kind', {
  'decoder-only': { prompt: str },
  /** Without `tgt`, the decoder reads the model's own greedy translation of `src`. */
  'encoder-decoder': { src: str, tgt: optional(str) },
});

/** One candidate next token (rendered by the engine's one token renderer) and its probability. */
export type TopTokenData = Infer<typeof topTokenData>;
export const topTokenData = obj({ token: str, prob: num });

/** The logit lens: per layer (0 = embeddings … N = the model's output), per decoder position, the top-k next tokens. */
export type LensOutputData = Infer<typeof lensOutputData>;
export const lensOutputData = obj({
  /** The decoder's input tokens; position t shows the prediction of the token after tokens[t]. */
  tokens: arrayOf(str),
  /** The source tokens of an encoder-decoder, else absent. */
  src: optional(arrayOf(str)),
  layers: arrayOf(obj({ layer: nonNegInt, positions: arrayOf(obj({ top: arrayOf(topTokenData) })) })),
  /** Set when the input was cut to the model's context: what is shown ("the last 64 of 97 tokens …"). */
  truncation: optional(str),
});

/** One attention head: 0-based layer and head (people see them 1-based). */
export type HeadRefData = Infer<typeof headRefData>;
export const headRefData = obj({ stack: attentionStack, layer: nonNegInt, head: nonNegInt });

/** What the model predicts for an input with a given set of heads off. */
export type PredictionData = Infer<typeof predictionData>;
export const predictionData = obj({
  /** Mean loss in nats of the input's own next tokens (teacher-forced, no label smoothing); 0 when `scored` is 0. */
  loss: num,
  /** Tokens the loss is the mean over (0 for a prompt of one token). */
  scored: nonNegInt,
  /** The top-k next tokens after the last position. */
  next: arrayOf(topTokenData),
});

/** The same input with every head on (`base`) and with the heads of `off` switched off (`ablated`). */
export type AblationOutputData = Infer<typeof ablationOutputData>;
export const ablationOutputData = obj({
  /** The decoder's input tokens (as the lens shows them); the prediction is of the token after the last. */
  tokens: arrayOf(str),
  off: arrayOf(headRefData),
  base: predictionData,
  ablated: predictionData,
  /**
   * Every token in either top-k, with its probability both ways (so each has a Δ): ordered
   * by the probability with every head on, then with the heads off.
   */
  compare: arrayOf(obj({ token: str, base: num, ablated: num })),
  truncation: optional(str),
});
