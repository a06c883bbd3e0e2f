/**
 * Steering by activation addition (src/lab/inference/steer.ts): what a request asks (two prompts
 * whose difference is the vector, the layer, α, and the decode) and what it answers (the steered
 * and the unsteered decode side by side). Shared by the host ⇄ model worker channel
 * (modelWorker.ts), and by the CLI's `steer --json`.
 *
 * Leaves out: computing any of it (src/lab) and the messages that carry it.
 */

import type { Infer } from './schema';
import { nonNegInt, num, obj, str } from './schema';
import { decodeOutput, decodeParams } from './model';

/** The vector's prompts, where it is added and how strongly. */
export type SteerVectorData = Infer<typeof steerVectorData>;
export const steerVectorData = obj({
  /**
   * v = mean resid_pre[layer](plus) − mean resid_pre[layer](minus), over each prompt's positions (BOS included);
   * an encoder-decoder's: plus and minus are sources, the means over the decoder's positions of each one's greedy
   * target (lab/inference/steer.ts).
   */
  plus: str,
  minus: str,
  /** 0-based: the stream entering decoder layer `layer` (L: the final norm's input). */
  layer: nonNegInt,
  /** The decode adds α·v at every position. */
  alpha: num,
});

/** A steering request: the vector and the decode (its `input` is the prompt continued). */
export type SteerRequestData = Infer<typeof steerRequestData>;
export const steerRequestData = obj({ vector: steerVectorData, decode: decodeParams });

/** A steering experiment's answer: both decodes of the same prompt, with the same settings. */
export type SteerOutputData = Infer<typeof steerOutputData>;
export const steerOutputData = obj({
  layer: nonNegInt,
  alpha: num,
  /** ‖v‖ (the unscaled difference); the decode adds α·v, of norm |α|·‖v‖. */
  norm: num,
  /** Mean ‖resid_pre[layer]‖ over the two prompts' positions: how large the stream is that v is added to. */
  streamNorm: num,
  steered: decodeOutput,
  unsteered: decodeOutput,
});
