/**
 * Fixtures for the attention tests: an unfused, per-head attention composed from the
 * float64 reference matmul + softmax kernels (the oracle), mask builders for the three
 * mask shapes of docs/ARCHITECTURE.md ("Masks"), a helper that runs forward + backward on a backend, and the
 * comparison of a fast backend's forward + backward with the reference on random inputs.
 *
 * Leaves out: the assertions themselves (attention.test.ts).
 */

import type { AttentionDims, Backend, FloatArray, MaskView } from '../../../../src/engine/backend';
import { Rng } from '../../../../src/engine/rng';
import type { Tolerance } from './opTestUtils';
import { expectClose, oracle, randn, toBackend } from './opTestUtils';

/** Dims for compact [B,T,C] / [B,S,C] layouts with scale 1/√D. */
export function compactDims(B: number, T: number, S: number, H: number, D: number): AttentionDims {
  return { B, T, S, H, D, qBatchStride: T * H * D, kvBatchStride: S * H * D, scale: 1 / Math.sqrt(D) };
}

/** Padding mask [B,1,1,S] from per-batch valid lengths (keys s < len[b] may be attended). */
export function paddingMask(lens: readonly number[], S: number): MaskView {
  const data = new Uint8Array(lens.length * S);
  lens.forEach((len, b) => data.fill(1, b * S, b * S + len));
  return { data, batchStride: S, rowStride: 0 };
}

/** Causal mask [1,1,T,T]: query t may attend keys s ≤ t. */
export function causalMask(T: number): MaskView {
  const data = new Uint8Array(T * T);
  for (let t = 0; t < T; t++) data.fill(1, t * T, t * T + t + 1);
  return { data, batchStride: 0, rowStride: T };
}

/** Decoder self-attention mask [B,1,T,T] = padding ∧ causal, materialized. */
export function combinedMask(lens: readonly number[], T: number): MaskView {
  const data = new Uint8Array(lens.length * T * T);
  lens.forEach((len, b) => {
    for (let t = 0; t < T; t++) for (let s = 0; s <= t && s < len; s++) data[(b * T + t) * T + s] = 1;
  });
  return { data, batchStride: T * T, rowStride: T };
}

/** Whether (b, t, s) may attend under `mask` (null = everything). */
export function allowed(mask: MaskView | null, b: number, t: number, s: number): boolean {
  return mask === null || mask.data[b * mask.batchStride + t * mask.rowStride + s] === 1;
}

/**
 * Attention the long way, per (b, h): copy the head slices out, scores = Q_h K_hᵀ · scale
 * (matmul), P = masked softmax (softmaxForward), P̃ = P ⊙ keep / (1 − p), O_h = P̃ V_h
 * (matmul), scatter O_h back. All in float64 on the reference backend.
 */
export function naiveAttention(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  dims: AttentionDims,
  mask: MaskView | null,
  keep: Uint8Array | null,
  dropP: number,
): { out: Float64Array; probs: Float64Array } {
  const ref = oracle();
  const { B, T, S, H, D, qBatchStride, kvBatchStride, scale } = dims;
  const C = H * D;
  const out = new Float64Array(B * qBatchStride);
  const probs = new Float64Array(B * H * T * S);
  const qh = new Float64Array(T * D);
  const kh = new Float64Array(S * D);
  const vh = new Float64Array(S * D);
  const scores = new Float64Array(T * S);
  const p = new Float64Array(T * S);
  const oh = new Float64Array(T * D);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++)
        for (let d = 0; d < D; d++) qh[t * D + d] = q[b * qBatchStride + t * C + h * D + d] as number;
      for (let s = 0; s < S; s++) {
        for (let d = 0; d < D; d++) {
          kh[s * D + d] = k[b * kvBatchStride + s * C + h * D + d] as number;
          vh[s * D + d] = v[b * kvBatchStride + s * C + h * D + d] as number;
        }
      }
      ref.matmul(scores, qh, kh, T, S, D, false, true, false);
      ref.scale(scores, T * S, scale);
      const view: MaskView | null =
        mask === null
          ? null
          : { data: mask.data.subarray(b * mask.batchStride), batchStride: 0, rowStride: mask.rowStride };
      ref.softmaxForward(p, scores, T, S, view, T);
      probs.set(p, (b * H + h) * T * S);
      if (keep !== null) {
        for (let i = 0; i < T * S; i++) p[i] = keep[(b * H + h) * T * S + i] === 1 ? (p[i] as number) / (1 - dropP) : 0;
      }
      ref.matmul(oh, p, vh, T, D, S, false, false, false);
      for (let t = 0; t < T; t++)
        for (let d = 0; d < D; d++) out[b * qBatchStride + t * C + h * D + d] = oh[t * D + d] as number;
    }
  }
  return { out, probs };
}

/** Everything one forward + backward run on a backend produced. */
export interface AttentionRun {
  out: FloatArray;
  probs: FloatArray;
  dq: FloatArray;
  dk: FloatArray;
  dv: FloatArray;
}

/**
 * Runs attentionForward and then (when dout is given) attentionBackward on `backend`,
 * with inputs copied into its own buffers and zeroed gradients.
 */
export function runAttention(
  backend: Backend,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  dims: AttentionDims,
  mask: MaskView | null,
  keep: Uint8Array | null,
  dropP: number,
  dout: ArrayLike<number> | null,
): AttentionRun {
  const bq = toBackend(backend, q);
  const bk = toBackend(backend, k);
  const bv = toBackend(backend, v);
  const out = backend.alloc(q.length);
  const probs = backend.alloc(dims.B * dims.H * dims.T * dims.S);
  backend.attentionForward(out, probs, bq, bk, bv, dims, mask, keep, dropP);
  const dq = backend.alloc(q.length);
  const dk = backend.alloc(k.length);
  const dv = backend.alloc(v.length);
  if (dout !== null)
    backend.attentionBackward(dq, dk, dv, toBackend(backend, dout), probs, bq, bk, bv, dims, keep, dropP);
  return { out, probs, dq, dk, dv };
}

/**
 * Runs forward + backward on `fast` and on `ref` with the same seeded random q, k, v and
 * upstream gradient (lengths `qLen` / `kvLen` when the layout has strides), and expects
 * every output close: probabilities, output, dq, dk, dv. `around` wraps the fast run, so a
 * caller can check what ran (e.g. that no fallback kernel was taken).
 */
export function compareAttention(
  fast: Backend,
  ref: Backend,
  tol: Tolerance,
  dims: AttentionDims,
  mask: MaskView | null,
  keep: Uint8Array | null,
  dropP: number,
  seed: number,
  lengths: { qLen?: number; kvLen?: number } = {},
  around: (run: () => AttentionRun) => AttentionRun = (run) => run(),
): void {
  const rng = new Rng(seed);
  const C = dims.H * dims.D;
  const q = randn(rng, lengths.qLen ?? dims.B * dims.T * C);
  const k = randn(rng, lengths.kvLen ?? dims.B * dims.S * C);
  const v = randn(rng, lengths.kvLen ?? dims.B * dims.S * C);
  const dout = randn(rng, lengths.qLen ?? dims.B * dims.T * C);
  const got = around(() => runAttention(fast, q, k, v, dims, mask, keep, dropP, dout));
  const want = runAttention(ref, q, k, v, dims, mask, keep, dropP, dout);
  for (const key of ['probs', 'out', 'dq', 'dk', 'dv'] as const) expectClose(got[key], want[key], tol, key);
}
