/**
 * What a model's last forward can be read for besides its loss, for people to look at:
 * every attention map of one batch item (the snapshots and the dashboard's heatmaps), the
 * masks the kernels used with their exact broadcast shapes (the mask view), and the logit
 * lens (nostalgebraist 2020: what the model would predict if it stopped after a layer).
 * Each is a copy, so it survives the next step.
 *
 * Leaves out: the forward pass (transformer.ts), head scores (../analysis/headScores.ts) and
 * switching heads off (heads.ts).
 *
 * Shape legend: B batch, S source positions, T target positions, H heads, C d_model, V vocabulary.
 */

import type { Backend, FloatArray, MaskView } from '../backend';
import type { MultiHeadAttention } from './attention';
import type { Block } from './block';
import type { AttentionStack } from './heads';
import type { Norm } from './layers';
import type { MaskSnapshot } from './masks';
import { causalView, paddingView, snapshotMask } from './masks';

/** Attention probabilities of one layer for one batch item: [H, T, S]. */
export interface AttentionMap {
  readonly stack: AttentionStack;
  readonly layer: number;
  readonly shape: readonly [number, number, number];
  readonly data: Float32Array;
  /**
   * Key/value heads of the layer (grouped-query attention; H when every head has its own):
   * query head h reads key/value head floor(h / (H / kvHeads)).
   */
  readonly kvHeads: number;
}

/** Which masks a forward used, and every attention map, for one batch item. */
export interface AttentionCapture {
  readonly maps: readonly AttentionMap[];
  readonly masks: readonly MaskSnapshot[];
}

/** The sizes of the last forward. */
export interface ForwardSizes {
  readonly B: number;
  readonly T: number;
  readonly S: number;
}

/**
 * The attention maps of batch item `b` (per layer [H, T, S]): encoder self-attention by
 * layer, then each decoder layer's self- and cross-attention.
 */
export function attentionMaps(
  encoder: readonly Block[],
  decoder: readonly Block[],
  H: number,
  l: ForwardSizes,
  b: number,
): AttentionMap[] {
  const maps: AttentionMap[] = [];
  const take = (stack: AttentionStack, layer: number, attn: MultiHeadAttention, Tq: number, Sk: number): void => {
    const n = H * Tq * Sk;
    const data = Float32Array.from(attn.probs.data.subarray(b * n, (b + 1) * n));
    maps.push({ stack, layer, shape: [H, Tq, Sk], data, kvHeads: attn.Hkv });
  };
  encoder.forEach((blk, i) => take('encoder.self', i, blk.selfAttn, l.S, l.S));
  decoder.forEach((blk, i) => {
    take('decoder.self', i, blk.selfAttn, l.T, l.T);
    if (blk.crossAttn) take('decoder.cross', i, blk.crossAttn, l.T, l.S);
  });
  return maps;
}

/** The masks of a forward: the views it attended through and the buffers behind them. */
export interface ForwardMasks extends ForwardSizes {
  /** Source padding (encoder-decoder), else null. */
  readonly srcMask: MaskView | null;
  /** The decoder's self-attention mask: combined (batch stride ≠ 0) or causal alone. */
  readonly selfMask: MaskView;
  /** Target padding [B, T]. */
  readonly tgtPad: Uint8Array;
  /** Causal square [maxT, maxT]. */
  readonly causal: Uint8Array;
  readonly maxT: number;
}

/**
 * The masks of a forward, dense, for the whole batch, with the exact broadcast shapes the
 * kernels used: source padding [B,1,1,S] (encoder self- and cross-attention), target
 * padding [B,1,1,T], causal [1,1,T,T], and — when the decoder combined them — padding ∧
 * causal [B,1,T,T].
 */
export function forwardMasks(f: ForwardMasks): MaskSnapshot[] {
  const masks: MaskSnapshot[] = [];
  if (f.srcMask) masks.push(snapshotMask('source.padding', f.srcMask, f.B, 1, f.S));
  masks.push(snapshotMask('target.padding', paddingView(f.tgtPad, f.T), f.B, 1, f.T));
  masks.push(snapshotMask('decoder.causal', causalView(f.causal, f.maxT), 1, f.T, f.T));
  if (f.selfMask.batchStride !== 0) masks.push(snapshotMask('decoder.self', f.selfMask, f.B, f.T, f.T));
  return masks;
}

/** What the logit lens reads: the decoder's residual stream of the last forward, and where to compute. */
export interface LensInputs {
  /** The stream after `layer` blocks (1..nDecoderLayers), [N, C]: block layer − 1's output, or a copy kept of it. */
  readonly stream: (layer: number) => FloatArray;
  /** The final norm (pre-LN), else null. */
  readonly decNorm: Norm | null;
  /** Rows of the last forward (B × T). */
  readonly N: number;
  /** The stream entering the first block (the embeddings) and leaving the last, [N, C]. */
  readonly decIn: FloatArray;
  readonly decTop: FloatArray;
  /** Scratch for the normed stream, the final norm's own output buffer, and the logits [N, V]. */
  readonly normed: FloatArray;
  readonly normOut: FloatArray;
  readonly logits: FloatArray;
  /** The output projection: logits [N, V] = y [N, C] · W_headᵀ + b. */
  readonly head: (k: Backend, logits: FloatArray, y: FloatArray, N: number) => void;
  readonly V: number;
}

/**
 * The logit lens: logits [N, V] read from the decoder's residual stream after `layer`
 * blocks (0 = the embeddings, nDecoderLayers = the top), through what the top goes through
 * — the final norm (pre-LN) and the output projection — so the top layer's equal the
 * model's logits. A post-LN model has no final norm: each block's output is already the
 * output of its last LayerNorm, the stream the next block reads, so it goes through the
 * output projection alone (the embeddings, layer 0, unnormalized). A view of `f.logits`,
 * valid until the next call or a backward (not a copy: GPT-2's are 200 MB for 1,000
 * positions, and a lens reads 13 of them); with `pick`, the logits [pick.n, V] of those rows
 * only. It reruns the final norm on the top so its statistics are those backward reads.
 */
export function lensLogits(k: Backend, f: LensInputs, layer: number, pick: LensRows | null = null): FloatArray {
  let h = layer === 0 ? f.decIn : f.stream(layer);
  const n = pick ? pick.n : f.N;
  if (pick) h = pick.of(h);
  if (f.decNorm) {
    f.decNorm.forward(k, f.normed, h, n);
    f.decNorm.forward(k, f.normOut, f.decTop, f.N); // restores backward's statistics (same numbers)
    h = f.normed;
  }
  f.head(k, f.logits, h, n);
  return f.logits.subarray(0, n * f.V);
}

/** Some rows of the stream for the lens (lensLogits): `n` of them, `of` picks them from a stream [N, C]. */
export interface LensRows {
  readonly n: number;
  readonly of: (stream: FloatArray) => FloatArray;
}
