/**
 * Activation and path patching (src/lab/inference/patch.ts): what a request asks and what it
 * answers, as heatmaps (rows × columns with their labels, values row-major). Shared by the
 * host ⇄ model worker channel (modelWorker.ts), and by the CLI's `patch --json`.
 *
 * Leaves out: computing any of it (src/lab) and the messages that carry it.
 */

import type { Infer } from './schema';
import { arrayOf, fail, nonNegInt, nullable, num, obj, oneOf, optional, refine, str } from './schema';

/** The metric at the last position: logit[answer] − logit[wrong], or log-softmax[answer]. */
export type PatchMetric = Infer<typeof patchMetric>;
export const patchMetric = oneOf('logit-diff', 'logprob');

/**
 * A sweep: resid_pre, attn_out or mlp_out per (layer, position); each head's output per (layer,
 * head) or per (layer, head, position); or path patching through receivers' inputs.
 */
export type PatchWhat = Infer<typeof patchWhat>;
export const patchWhat = oneOf('resid', 'heads', 'heads-pos', 'mlp', 'attn', 'path');

/** The receivers' input path patching replaces: their queries, keys or values. */
export type PathInput = Infer<typeof pathInput>;
export const pathInput = oneOf('q', 'k', 'v');

/** Most top tokens a request may ask for per patched run. */
export const MAX_PATCH_TOP = 10;

/**
 * Most cells a sweep keeps top tokens for: 8,192 cells × 5 tokens is about 1 MB of JSON (GPT-2 small's
 * heads × positions of a 56-token prompt); a larger sweep keeps its metric only.
 */
export const MAX_TOP_CELLS = 8192;

/** A predicted next token (as the tokenizer shows it) and its probability at the last position. */
export type PatchTopTokenData = Infer<typeof patchTopTokenData>;
export const patchTopTokenData = obj({ token: str, p: num });

/**
 * A head: 0-based layer and head (people see them 1-based) of a decoder self-attention, or of an encoder-decoder's
 * `attention`: its encoder's, a decoder layer's self- or cross-attention (absent: self).
 */
export const patchHead = obj({
  layer: nonNegInt,
  head: nonNegInt,
  attention: optional(oneOf('encoder', 'self', 'cross')),
});

/** What a patching request gives: prompts and answers as text. */
export type PatchRequestData = Infer<typeof patchRequestData>;
export const patchRequestData = obj({
  clean: str,
  corrupted: str,
  answer: str,
  /** The wrong answer (needed with logit-diff). */
  wrong: nullable(str),
  metric: patchMetric,
  what: arrayOf(patchWhat),
  /** Path patching's receivers and their input. */
  receivers: optional(arrayOf(patchHead)),
  input: optional(pathInput),
  /**
   * Keep each run's `top` most likely next tokens (at most MAX_PATCH_TOP; absent or 0: none): the
   * clean, the corrupted and every patched run's (a sweep of more than MAX_TOP_CELLS cells keeps none).
   */
  top: optional(
    refine(nonNegInt, (v, p) => {
      if (v > MAX_PATCH_TOP) fail(p, `at most ${MAX_PATCH_TOP} top tokens`, v);
    }),
  ),
  /** An encoder-decoder's shared target prefix (clean and corrupted are then sources). */
  target: optional(str),
});

/** One sweep's heatmap: rows × cols, `values` the patched metric and `normalised` its recovery, both row-major. */
export type PatchMapData = Infer<typeof patchMapData>;
export const patchMapData = obj({
  what: patchWhat,
  /** Row labels: layers L1.., or heads L1H1.. (heads-pos). */
  rows: arrayOf(str),
  /** Column labels: positions ("0 <bos>", "1 a", …) or heads H1... */
  cols: arrayOf(str),
  values: arrayOf(num),
  /** (patched − corrupted) / (clean − corrupted): 0 = as corrupted, 1 = as clean. */
  normalised: arrayOf(num),
  /** Path patching: its receivers and their input (rows are the senders' layers). */
  path: optional(obj({ receivers: arrayOf(patchHead), input: pathInput })),
  /** With the request's `top`: each cell's patched run's top tokens, most likely first, row-major as `values`. */
  top: optional(arrayOf(arrayOf(patchTopTokenData))),
  /** An encoder-decoder's map of one stack: columns are source (encoder) or target (decoder) positions. */
  stack: optional(oneOf('encoder', 'decoder')),
});

/** A patching experiment's results. */
export type PatchOutputData = Infer<typeof patchOutputData>;
export const patchOutputData = obj({
  /** The prompts' tokens (BOS first); position p of a map is token p. */
  tokens: obj({
    clean: arrayOf(str),
    corrupted: arrayOf(str),
    /** An encoder-decoder's target prefix (BOS first; clean and corrupted are its sources, EOS last). */
    target: optional(arrayOf(str)),
  }),
  answer: str,
  wrong: nullable(str),
  metric: patchMetric,
  /** The metric on the clean and the corrupted prompt. */
  clean: num,
  corrupted: num,
  maps: arrayOf(patchMapData),
  /** With the request's `top`: the clean and the corrupted run's top tokens, most likely first. */
  top: optional(obj({ clean: arrayOf(patchTopTokenData), corrupted: arrayOf(patchTopTokenData) })),
});
