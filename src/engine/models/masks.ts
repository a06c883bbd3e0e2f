/**
 * Attention masks, built the way docs/ARCHITECTURE.md ("Masks") states them (1 = may attend):
 * padding [B,1,1,S] = (ids ≠ PAD), causal [1,1,T,T] = (s ≤ t), and the decoder's
 * self-attention mask [B,1,T,T] = padding ∧ causal. With a sliding window of W (Mistral,
 * Gemma 2) the causal mask is windowed: query t may attend to key s iff s ≤ t and t − s < W,
 * in training, in a prefill and in each decoding step (`fillWindowRow`, the row of the newest
 * position). Each is stored densely for its own
 * shape and broadcast to the scores [B,H,T,S] through strides (a {@link MaskView}), never
 * materialized per head. `snapshot` copies one out with its exact shape for the mask view.
 */

import type { MaskView } from '../backend';
import { PAD } from '../tokenizers/special';

/** A mask as the dashboard shows it: what it is, its broadcast shape, its values. */
export interface MaskSnapshot {
  /**
   * source.padding [B,1,1,S]: encoder self-attention and cross-attention;
   * target.padding [B,1,1,T]; decoder.causal [1,1,T,T]; decoder.self [B,1,T,T] = padding ∧ causal.
   */
  readonly name: 'source.padding' | 'target.padding' | 'decoder.causal' | 'decoder.self';
  /** The shape the engine used, e.g. [B, 1, 1, S] or [1, 1, T, T]. */
  readonly shape: readonly number[];
  /** Row-major values of that shape; 1 = may attend. */
  readonly data: Uint8Array;
}

/**
 * out[b, s] = ids[b, s] ≠ pad, for a padding mask [B,1,1,S]. Returns true if any pad was
 * seen. `pad` −1 (a vocabulary without PAD, such as GPT-2's) masks nothing.
 */
export function fillPaddingMask(out: Uint8Array, ids: Int32Array, B: number, S: number, pad = PAD): boolean {
  let any = false;
  for (let i = 0; i < B * S; i++) {
    const keep = ids[i] !== pad;
    out[i] = keep ? 1 : 0;
    if (!keep) any = true;
  }
  return any;
}

/** Whether query position t may attend to key position s: s ≤ t, and t − s < window unless window is 0 (none). */
export function causalAllows(t: number, s: number, window = 0): boolean {
  return s <= t && (window === 0 || t - s < window);
}

/** out[t, s] = s ≤ t (and t − s < window, when window > 0) over a [T, T] square (row stride T). */
export function fillCausalMask(out: Uint8Array, T: number, window = 0): void {
  for (let t = 0; t < T; t++) for (let s = 0; s < T; s++) out[t * T + s] = causalAllows(t, s, window) ? 1 : 0;
}

/** out[b, t, s] = pad[b, s] ∧ causal(t, s, window): the decoder self-attention mask [B,1,T,T]. */
export function fillCombinedMask(out: Uint8Array, pad: Uint8Array, B: number, T: number, window = 0): void {
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const row = (b * T + t) * T;
      for (let s = 0; s < T; s++) out[row + s] = causalAllows(t, s, window) && pad[b * T + s] === 1 ? 1 : 0;
    }
  }
}

/**
 * The row of the newest position P − 1 of a decoding step under a sliding window: out[s] = (P − 1 − s < window)
 * for s < P. Returns its view [1, 1, 1, P] for every row of the step, or null when the window masks nothing
 * (window 0, or P ≤ window).
 */
export function fillWindowRow(out: Uint8Array, P: number, window: number): MaskView | null {
  if (window === 0 || P <= window) return null;
  for (let s = 0; s < P; s++) out[s] = causalAllows(P - 1, s, window) ? 1 : 0;
  return { data: out, batchStride: 0, rowStride: 0 };
}

/** View of a padding mask [B,1,1,S]. */
export function paddingView(pad: Uint8Array, S: number): MaskView {
  return { data: pad, batchStride: S, rowStride: 0 };
}

/** View of a causal mask stored as a [maxT, maxT] square: [1,1,T,T] for any T ≤ maxT. */
export function causalView(causal: Uint8Array, maxT: number): MaskView {
  return { data: causal, batchStride: 0, rowStride: maxT };
}

/** View of a combined mask [B,1,T,T]. */
export function combinedView(mask: Uint8Array, T: number): MaskView {
  return { data: mask, batchStride: T * T, rowStride: T };
}

/** Dense copy of a mask view for its declared shape [b, 1, t, s] (b or t may be 1: broadcast). */
export function snapshotMask(
  name: MaskSnapshot['name'],
  view: MaskView,
  b: number,
  t: number,
  s: number,
): MaskSnapshot {
  const data = new Uint8Array(b * t * s);
  for (let i = 0; i < b; i++) {
    for (let j = 0; j < t; j++) {
      for (let l = 0; l < s; l++)
        data[(i * t + j) * s + l] = view.data[i * view.batchStride + j * view.rowStride + l] ?? 0;
    }
  }
  return { name, shape: [b, 1, t, s], data };
}
