/**
 * Hook points of the forward pass, for reading and replacing what flows through a decoder
 * layer (TransformerLens's names): activation and path patching (lab/inference/patch.ts),
 * and any later reader that needs an activation mid-forward. A hook is one function,
 * `ForwardOptions.hook`, called at every hook point of a forward in order with a view of
 * that point's activation for the whole batch; it may read it (capture: copy what it keeps,
 * the buffer is reused) or write it in place (patch), and the rest of the forward reads what
 * it wrote. Without a hook the forward does no extra work (one null check per sublayer).
 *
 * Points, per decoder layer ℓ (0-based), each a view [B, rows, heads·width] (row-major,
 * head h's channels at h·width .. (h+1)·width of a row):
 *   resid_pre  [B, T, C]      the input of block ℓ; ℓ = L (the number of decoder layers) is the
 *                             stream entering the final norm (pre-LN) or the output projection
 *   q          [B, T, H·D]    the query projection x·W_qᵀ (+ b) of the self-attention, before
 *                             qk-norm and RoPE (TransformerLens's hook_q)
 *   k, v       [B, T, Hkv·D]  the key and value projections, likewise (hook_k, hook_v); under
 *                             grouped-query attention Hkv heads, each read by H / Hkv query heads
 *   z          [B, T, H·D]    the attention output per head, before W_o (hook_z); a head's
 *                             result is z_h·W_o[:, h·D:(h+1)·D]ᵀ
 *   attn_out   [B, T, C]      the self-attention's output after W_o and its bias (before dropout)
 *   mlp_out    [B, T, C]      the feed-forward network's output (before dropout)
 * in the order resid_pre, q, k, v, z, attn_out, mlp_out of each layer (a parallel-residual
 * block: the same, both sublayers reading resid_pre), then resid_pre of layer L.
 *
 * An encoder-decoder has the same points in its decoder (T target positions), and more:
 *   cross_q    [B, T, H·D]    the decoder layer's cross-attention query projection
 *   cross_k, cross_v [B, S, Hkv·D]  its key and value projections of the encoder output (S source
 *                             positions)
 *   cross_z    [B, T, H·D]    the cross-attention's heads before its W_o
 *   cross_out  [B, T, C]      the cross-attention's output after W_o and its bias
 * between a decoder layer's attn_out and mlp_out (q, k, v, z, then out); and, first, the
 * encoder's points, the decoder-only names with `enc_` (enc_resid_pre, enc_q, enc_k, enc_v,
 * enc_z, enc_attn_out, enc_mlp_out) over [B, S, ·] per encoder layer, and enc_resid_pre of layer
 * L_enc, the stream entering the encoder's final norm (pre-LN) or the cross-attentions (post-LN).
 * A decoder-only forward reaches none of these: its hooks see what they always saw.
 *
 * Leaves out: hooks in training (refused: backward would not see a replaced activation;
 * a hook that only reads may say so, `ForwardOptions.hookReadsOnly`, and a backward may follow),
 * and in key/value-cache decoding (stepper.ts; its one write, steering's addition to resid_pre,
 * is the stepper's `residAdd` option, steering.ts).
 */

import type { FloatArray } from '../backend';

/** A decoder-only layer's hook point, and an encoder-decoder decoder layer's self-attention, stream and MLP points. */
export type LayerPoint = 'resid_pre' | 'q' | 'k' | 'v' | 'z' | 'attn_out' | 'mlp_out';

/** An encoder-decoder's decoder cross-attention points. */
export type CrossPoint = 'cross_q' | 'cross_k' | 'cross_v' | 'cross_z' | 'cross_out';

/** An encoder layer's points: a layer's points with `enc_`. */
export type EncoderPoint = `enc_${LayerPoint}`;

/** A hook point's name (see the file comment). */
export type HookPoint = LayerPoint | CrossPoint | EncoderPoint;

/** Every hook point of a decoder-only layer, in the order a layer reaches them. */
export const HOOK_POINTS: readonly LayerPoint[] = ['resid_pre', 'q', 'k', 'v', 'z', 'attn_out', 'mlp_out'];

/** The cross-attention's name of an attention point q, k, v, z or the sublayer output attn_out. */
export function crossPoint(p: HookPoint): HookPoint {
  if (p === 'q' || p === 'k' || p === 'v' || p === 'z') return `cross_${p}`;
  return p === 'attn_out' ? 'cross_out' : p;
}

/** The encoder's name of a layer point. */
export function encoderPoint(p: HookPoint): HookPoint {
  return (HOOK_POINTS as readonly string[]).includes(p) ? (`enc_${p}` as EncoderPoint) : p;
}

/** Whether `p` is an encoder point. */
export function isEncoderPoint(p: HookPoint): p is EncoderPoint {
  return p.startsWith('enc_');
}

/** Where a hook is called and the shape of the view it gets: [B, T, heads·width]. */
export interface HookSite {
  readonly point: HookPoint;
  /** 0-based layer of the point's stack (enc_*: the encoder's); resid_pre also L (the final norm's input). */
  readonly layer: number;
  readonly B: number;
  /** Rows per batch item (positions: target T, or source S at enc_* and cross_k, cross_v). */
  readonly T: number;
  /** Heads in a row: H (q, z), Hkv (k, v) or 1 (resid_pre, attn_out, mlp_out). */
  readonly heads: number;
  /** Channels per head: D, or C for the one-head points. */
  readonly width: number;
}

/**
 * Called at every hook point of a forward with the activation of the whole batch, a view
 * of [B, T, heads·width] valid during the call only: read it, or write it in place.
 */
export type ForwardHook = (site: HookSite, data: FloatArray) => void;

/** A hook bound to one layer, as a block and its attention call it (the site without its layer). */
export type LayerHook = (site: Omit<HookSite, 'layer'>, data: FloatArray) => void;

/** The layer hook of `hook` at `layer`: passes the view of [B, T, heads·width] only. */
export function layerHook(hook: ForwardHook, layer: number): LayerHook {
  return (site, data) => hook({ ...site, layer }, data.subarray(0, site.B * site.T * site.heads * site.width));
}

/** `hook` with each site's point renamed by `rename` (the encoder's and the cross-attention's points). */
export function renamedHook(hook: LayerHook, rename: (p: HookPoint) => HookPoint): LayerHook {
  return (site, data) => hook({ ...site, point: rename(site.point) }, data);
}
