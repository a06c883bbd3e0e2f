/**
 * Attention masks, built the way docs/ARCHITECTURE.md ("Masks") states them (1 = may attend):
 * padding [B,1,1,S] = (ids ≠ PAD), causal [1,1,T,T] = (s ≤ t), and the decoder's
 * self-attention mask [B,1,T,T] = padding ∧ causal. Each is stored densely for its own
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

/** out[t, s] = s ≤ t over a [T, T] square (row stride T). */
export function fillCausalMask(out: Uint8Array, T: number): void {
  for (let t = 0; t < T; t++) for (let s = 0; s < T; s++) out[t * T + s] = s <= t ? 1 : 0;
}

/** out[b, t, s] = pad[b, s] ∧ (s ≤ t): the decoder self-attention mask [B,1,T,T]. */
export function fillCombinedMask(out: Uint8Array, pad: Uint8Array, B: number, T: number): void {
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const row = (b * T + t) * T;
      for (let s = 0; s < T; s++) out[row + s] = s <= t && pad[b * T + s] === 1 ? 1 : 0;
    }
  }
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
