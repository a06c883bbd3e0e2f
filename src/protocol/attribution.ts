/**
 * Attribution (issue 32): direct logit attribution, the accumulated residual stream and
 * attribution patching of a clean and a corrupted prompt (src/lab/inference/attribute.ts), as
 * the model worker answers them and `attention-lab attribute --json` prints them. Layers,
 * heads and positions are 0-based; arrays run over layers, then heads, then positions.
 *
 * Leaves out: computing any of it (src/lab, src/engine/analysis) and the messages that carry it.
 */

import type { Infer } from './schema';
import { arrayOf, bool, nonNegInt, nullable, num, obj, oneOf, optional, str, variants } from './schema';
import { patchOutputData } from './patching';

/** What is measured at the last position: logit[answer] − logit[wrong], or log p(answer). */
export type AttributionMetricData = Infer<typeof attributionMetricData>;
export const attributionMetricData = obj({
  kind: oneOf('logit-diff', 'logprob'),
  /** Text that must be one token of the run's tokenizer. */
  answer: str,
  /** The other token of logit-diff (required there; unused by logprob). */
  wrong: optional(str),
});

/** Which attribution: per-component DLA, the accumulated residual, or attribution patching. */
export type AttributionWhat = Infer<typeof attributionWhat>;
export const attributionWhat = oneOf('dla', 'resid-accum', 'attribution');

/** What an attribution request reads. */
export type AttributionParamsData = Infer<typeof attributionParamsData>;
export const attributionParamsData = obj({
  /** The clean prompt; an encoder-decoder's clean source. */
  clean: str,
  /** The corrupted prompt (attribution patching; DLA and the accumulated residual read the clean one only). */
  corrupted: str,
  /** An encoder-decoder's target prefix, shared by both sources (absent: BOS alone); the metric at its last token. */
  target: optional(str),
  metric: attributionMetricData,
  what: attributionWhat,
  /** Attribution patching only: run the full patching sweeps too (lab/inference/patch.ts), to show beside it. */
  withPatching: optional(bool),
});

/** One component of DLA: the embeddings, a head, an attention output bias or an MLP, per position. */
export type DlaComponentData = Infer<typeof dlaComponentData>;
export const dlaComponentData = obj({
  /** cross-head, cross-bias: an encoder-decoder's decoder cross-attention heads and output bias. */
  kind: oneOf('embed', 'head', 'attn-bias', 'cross-head', 'cross-bias', 'mlp'),
  layer: nullable(nonNegInt),
  head: nullable(nonNegInt),
  values: arrayOf(num),
});

const common = {
  /** The clean prompt's tokens (BOS first); the metric is read at the last. */
  tokens: arrayOf(str),
  answer: str,
  wrong: str,
  /** How it was computed: the final norm's scale from the clean run, biases excluded, pre-cap logits. */
  note: str,
  /** The final norm's and the unembedding's biases, which no component owns, per position. */
  excluded: arrayOf(num),
  /** The model's logit[answer] − logit[wrong] per position (before any logit soft-cap). */
  logitDiff: arrayOf(num),
};

/** The answer to an attribution request, by `what`. */
export type AttributionOutputData = Infer<typeof attributionOutputData>;
export const attributionOutputData = variants('what', {
  dla: { ...common, components: arrayOf(dlaComponentData) },
  'resid-accum': { ...common, layers: arrayOf(obj({ layer: nonNegInt, values: arrayOf(num) })) },
  attribution: {
    tokens: arrayOf(str),
    corruptedTokens: arrayOf(str),
    metric: attributionMetricData,
    note: str,
    /** The metric of each prompt. */
    clean: num,
    corrupted: num,
    /** Estimated (patched − corrupted) / (clean − corrupted) of each patch: [layer][position]. */
    resid: arrayOf(arrayOf(num)),
    attnOut: arrayOf(arrayOf(num)),
    mlpOut: arrayOf(arrayOf(num)),
    /** [layer][head] (every position at once) and [layer][head][position]. */
    head: arrayOf(arrayOf(num)),
    headPos: arrayOf(arrayOf(arrayOf(num))),
    /** An encoder-decoder's sources (tokens and corruptedTokens are then the shared target's). */
    source: optional(obj({ clean: arrayOf(str), corrupted: arrayOf(str) })),
    /** An encoder-decoder's decoder cross-attention: cross_out [layer][position], heads as head and headPos. */
    cross: optional(
      obj({ out: arrayOf(arrayOf(num)), head: arrayOf(arrayOf(num)), headPos: arrayOf(arrayOf(arrayOf(num))) }),
    ),
    /** An encoder-decoder's encoder, per source position: [encoder layer][position], heads as above. */
    encoder: optional(
      obj({
        resid: arrayOf(arrayOf(num)),
        attnOut: arrayOf(arrayOf(num)),
        mlpOut: arrayOf(arrayOf(num)),
        head: arrayOf(arrayOf(num)),
        headPos: arrayOf(arrayOf(arrayOf(num))),
      }),
    ),
    /** With `withPatching`: full activation patching of the same prompts (resid, attn, mlp, heads, heads-pos). */
    patching: optional(patchOutputData),
  },
});
