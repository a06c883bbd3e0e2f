/**
 * Fused multi-head scaled dot-product attention, forward and backward (Vaswani et al.
 * §3.2.1–3.2.2): Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V per head, the heads being
 * consecutive D-wide slices of the C channels (the paper's per-head W^Q_i stacked into one
 * d_model × d_model projection).
 *
 * Shape legend: B batch, T query positions, S key/value positions, H heads, D head size,
 * C = H·D. q/out are [B, T, C] with batch stride qBatchStride; k/v are [B, S, C] with
 * batch stride kvBatchStride (larger than S·C for a key/value cache of maxT rows); probs
 * and keep are [B, H, T, S], contiguous. The mask (1 = may attend) is a broadcast view
 * read at data[b·batchStride + t·rowStride + s], the same for every head.
 *
 * Masked keys are never read: their scores are not computed and their values are skipped,
 * so nothing at a masked position (not even NaN) can reach the output or the gradients.
 *
 * Leaves out: the q/k/v and output projections (matmuls), and building masks.
 */

import type { AttentionDims, FloatArray, Kernels, MaskView } from '../backend';
import { keepScale } from './dropout';
import { softmaxRow } from './softmax';

/** Σ_d x[xOff + d] · y[yOff + d] over d < n, in float64. */
function dot(x: FloatArray, xOff: number, y: FloatArray, yOff: number, n: number): number {
  let s = 0;
  for (let d = 0; d < n; d++) s += (x[xOff + d] as number) * (y[yOff + d] as number);
  return s;
}

/**
 * For each b, h, t: p = softmax_mask(scale · q[b,t,h] · k[b,:,h]ᵀ) over s < S, saved in
 * probs (post-softmax, pre-dropout); out[b,t,h] = Σ_s p[s] · keep[s] / (1 − dropP) · v[b,s,h]
 * (overwrites out). keep null = no dropout. A fully masked row gives p = 0 and out = 0.
 */
export function attentionForward(
  out: FloatArray,
  probs: FloatArray,
  q: FloatArray,
  k: FloatArray,
  v: FloatArray,
  dims: AttentionDims,
  mask: MaskView | null,
  keep: Uint8Array | null,
  dropP: number,
): void {
  const { B, T, S, H, D, qBatchStride, kvBatchStride, scale } = dims;
  const C = H * D;
  const maskData = mask === null ? null : mask.data;
  const kappa = keep === null ? 1 : keepScale(dropP);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kvBase = b * kvBatchStride + h * D;
      for (let t = 0; t < T; t++) {
        const qOff = b * qBatchStride + t * C + h * D; // q[b,t,h·D:(h+1)·D], also out's slice
        const pOff = ((b * H + h) * T + t) * S; // probs[b,h,t,:]
        const mOff = mask === null ? 0 : b * mask.batchStride + t * mask.rowStride;
        // Scores into the probs row, then softmax in place.
        for (let s = 0; s < S; s++) {
          const allowed = maskData === null || maskData[mOff + s] !== 0;
          probs[pOff + s] = allowed ? scale * dot(q, qOff, k, kvBase + s * C, D) : 0;
        }
        softmaxRow(probs, pOff, probs, pOff, S, maskData, mOff);
        // out = Σ_s p̃[s] · v[s] with p̃ = p · keep / (1 − dropP).
        for (let d = 0; d < D; d++) out[qOff + d] = 0;
        for (let s = 0; s < S; s++) {
          let w = probs[pOff + s] as number;
          if (keep !== null) w = keep[pOff + s] === 1 ? w * kappa : 0;
          if (w === 0) continue; // masked or dropped: v[s] is not read
          const vOff = kvBase + s * C;
          for (let d = 0; d < D; d++) out[qOff + d] = (out[qOff + d] as number) + w * (v[vOff + d] as number);
        }
      }
    }
  }
}

/**
 * Differentiates the forward above (accumulates dq, dk, dv), per (b, h, t) with
 * p̃[s] = p[s] · w[s], w[s] = keep[s] / (1 − dropP) (or 1 without dropout):
 *   out = Σ_s p̃[s] v[s]                 ⇒ dv[s] += p̃[s] · dout,  dp[s] = w[s] · (dout · v[s])
 *   p = softmax(z)                       ⇒ dz[s] = p[s] · (dp[s] − Σ_j p[j] dp[j])
 *   z[s] = scale · q · k[s]              ⇒ dq += scale · Σ_s dz[s] k[s],  dk[s] += scale · dz[s] q
 * `scratch` holds dp for one row (length ≥ S). Positions with p = 0 (masked) get nothing.
 */
export function attentionBackward(
  dq: FloatArray,
  dk: FloatArray,
  dv: FloatArray,
  dout: FloatArray,
  probs: FloatArray,
  q: FloatArray,
  k: FloatArray,
  v: FloatArray,
  dims: AttentionDims,
  keep: Uint8Array | null,
  dropP: number,
  scratch: Float64Array,
): void {
  const { B, T, S, H, D, qBatchStride, kvBatchStride, scale } = dims;
  const C = H * D;
  const kappa = keep === null ? 1 : keepScale(dropP);
  const dp = scratch;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kvBase = b * kvBatchStride + h * D;
      for (let t = 0; t < T; t++) {
        const qOff = b * qBatchStride + t * C + h * D;
        const pOff = ((b * H + h) * T + t) * S;
        let pDotDp = 0; // Σ_j p[j] dp[j]
        for (let s = 0; s < S; s++) {
          const p = probs[pOff + s] as number;
          const w = keep === null ? 1 : keep[pOff + s] === 1 ? kappa : 0;
          if (p === 0 || w === 0) {
            dp[s] = 0;
            continue;
          }
          const vOff = kvBase + s * C;
          dp[s] = w * dot(dout, qOff, v, vOff, D);
          pDotDp += p * (dp[s] as number);
          const pw = p * w;
          for (let d = 0; d < D; d++) dv[vOff + d] = (dv[vOff + d] as number) + pw * (dout[qOff + d] as number);
        }
        for (let s = 0; s < S; s++) {
          const p = probs[pOff + s] as number;
          if (p === 0) continue;
          const dz = scale * p * ((dp[s] as number) - pDotDp);
          const kOff = kvBase + s * C;
          for (let d = 0; d < D; d++) {
            dq[qOff + d] = (dq[qOff + d] as number) + dz * (k[kOff + d] as number);
            dk[kOff + d] = (dk[kOff + d] as number) + dz * (q[qOff + d] as number);
          }
        }
      }
    }
  }
}

/** The two attention kernels, sharing one row scratch owned by the returned object. */
export type AttentionKernels = Pick<Kernels, 'attentionForward' | 'attentionBackward'>;

/**
 * Creates attention kernels with their own scratch for attentionBackward (one row of S
 * float64s). It grows to the largest S seen and is then reused, so steady-state training
 * allocates nothing; each backend instance owns its own (no shared module state).
 */
export function createAttentionKernels(): AttentionKernels {
  let scratch = new Float64Array(0);
  return {
    attentionForward,
    attentionBackward(dq, dk, dv, dout, probs, q, k, v, dims, keep, dropP): void {
      if (scratch.length < dims.S) scratch = new Float64Array(dims.S);
      attentionBackward(dq, dk, dv, dout, probs, q, k, v, dims, keep, dropP, scratch);
    },
  };
}
