/**
 * Fused multi-head scaled dot-product attention, forward and backward (Vaswani et al.
 * §3.2.1–3.2.2): Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V per head, the heads being
 * consecutive D-wide slices of the C channels (the paper's per-head W^Q_i stacked into one
 * d_model × d_model projection).
 *
 * Shape legend: B batch, T query positions, S key/value positions, H heads, D head size,
 * C = H·D (the queries' width: d_model only when headDim is unset), Hkv key/value heads
 * (dims.Hkv, default H; query head h reads kv head g = floor(h / (H/Hkv)): grouped-query
 * attention, Ainslie et al. 2023). q/out are
 * [B, T, C] with batch stride qBatchStride; k/v are [B, S, Hkv·D] with batch stride
 * kvBatchStride (larger than S·Hkv·D for a key/value cache of maxT rows); probs and keep
 * are [B, H, T, S], contiguous. The mask (1 = may attend) is a broadcast view read at
 * data[b·batchStride + t·rowStride + s], the same for every head.
 *
 * A score is z = scale·q·k; then, when dims.softCap = c > 0, z = c·tanh(z/c) (Gemma 2);
 * then, with ALiBi slopes (Press et al. 2022), z += slope[h]·(s − (qStart + t)); then the
 * mask and the softmax. Without those fields every operation is the plain kernel's.
 *
 * Masked keys are never read: their scores are not computed and their values are skipped,
 * so nothing at a masked position (not even NaN) can reach the output or the gradients.
 *
 * Leaves out: the q/k/v and output projections (matmuls), and building masks.
 */

import type { AttentionDims, FloatArray, Kernels, MaskView } from '../backend';
import { EngineError } from '../errors';
import { keepScale } from './dropout';
import { softmaxRow } from './softmax';

/** Σ_d x[xOff + d] · y[yOff + d] over d < n, in float64. */
function dot(x: FloatArray, xOff: number, y: FloatArray, yOff: number, n: number): number {
  let s = 0;
  for (let d = 0; d < n; d++) s += (x[xOff + d] as number) * (y[yOff + d] as number);
  return s;
}

/** The optional fields of {@link AttentionDims}, resolved to their defaults and checked. */
export interface AttentionOptions {
  /** Key/value heads. */
  readonly Hkv: number;
  /** Query heads per kv head (H / Hkv). */
  readonly group: number;
  /** Soft-cap of the scores; 0 = off. */
  readonly softCap: number;
  /** ALiBi slopes [H], or null. */
  readonly alibi: FloatArray | null;
  /** Absolute position of query row 0. */
  readonly qStart: number;
}

/**
 * Resolves dims' optional fields (Hkv, softCap, alibi, qStart) to their defaults; throws
 * EngineError when Hkv does not divide H, the cap is negative or not finite, there are
 * fewer slopes than heads, or qStart is not a position.
 */
export function attentionOptions(dims: AttentionDims): AttentionOptions {
  const { H } = dims;
  const Hkv = dims.Hkv ?? H;
  const softCap = dims.softCap ?? 0;
  const alibi = dims.alibi ?? null;
  const qStart = dims.qStart ?? 0;
  if (!(Number.isInteger(Hkv) && Hkv > 0 && H % Hkv === 0)) {
    throw new EngineError(
      'shape/mismatch',
      `Attention has ${H} query heads and ${Hkv} key/value heads; use a key/value head count that divides ${H}.`,
    );
  }
  if (!(Number.isFinite(softCap) && softCap >= 0)) {
    throw new EngineError('config/invalid', `Attention soft-cap ${softCap} is invalid; use 0 (off) or a positive cap.`);
  }
  if (alibi !== null && alibi.length < H) {
    throw new EngineError(
      'shape/mismatch',
      `ALiBi has ${alibi.length} slopes for ${H} heads; pass one slope per query head.`,
    );
  }
  if (!(Number.isInteger(qStart) && qStart >= 0)) {
    throw new EngineError('shape/mismatch', `Attention qStart ${qStart} is invalid; use a position ≥ 0.`);
  }
  return { Hkv, group: H / Hkv, softCap, alibi, qStart };
}

/**
 * For each b, h, t: p = softmax_mask(score(q[b,t,h], k[b,:,g])) over s < S, saved in
 * probs (post-softmax, pre-dropout); out[b,t,h] = Σ_s p[s] · keep[s] / (1 − dropP) · v[b,s,g]
 * (overwrites out), g the kv head of h and the score as in the file header. keep null =
 * no dropout. A fully masked row gives p = 0 and out = 0.
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
  const { Hkv, group, softCap, alibi, qStart } = attentionOptions(dims);
  const C = H * D;
  const KC = Hkv * D; // k/v row width
  const maskData = mask === null ? null : mask.data;
  const kappa = keep === null ? 1 : keepScale(dropP);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kvBase = b * kvBatchStride + Math.floor(h / group) * D;
      const slope = alibi === null ? 0 : (alibi[h] as number);
      for (let t = 0; t < T; t++) {
        const qOff = b * qBatchStride + t * C + h * D; // q[b,t,h·D:(h+1)·D], also out's slice
        const pOff = ((b * H + h) * T + t) * S; // probs[b,h,t,:]
        const mOff = mask === null ? 0 : b * mask.batchStride + t * mask.rowStride;
        // Scores into the probs row, then softmax in place.
        for (let s = 0; s < S; s++) {
          const allowed = maskData === null || maskData[mOff + s] !== 0;
          if (!allowed) {
            probs[pOff + s] = 0;
            continue;
          }
          let z = scale * dot(q, qOff, k, kvBase + s * KC, D);
          if (softCap > 0) z = softCap * Math.tanh(z / softCap);
          if (alibi !== null) z += slope * (s - (qStart + t));
          probs[pOff + s] = z;
        }
        softmaxRow(probs, pOff, probs, pOff, S, maskData, mOff);
        // out = Σ_s p̃[s] · v[s] with p̃ = p · keep / (1 − dropP).
        for (let d = 0; d < D; d++) out[qOff + d] = 0;
        for (let s = 0; s < S; s++) {
          let w = probs[pOff + s] as number;
          if (keep !== null) w = keep[pOff + s] === 1 ? w * kappa : 0;
          if (w === 0) continue; // masked or dropped: v[s] is not read
          const vOff = kvBase + s * KC;
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
 * (k, v and dk, dv of the kv head g of h, so a group's query heads add into one kv head).
 * ALiBi adds a constant to z (nothing to differentiate); a soft-cap z = c·tanh(u/c) of
 * u = scale·q·k multiplies dz by 1 − tanh²(u/c), u recomputed from q and k.
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
  const { Hkv, group, softCap } = attentionOptions(dims);
  const C = H * D;
  const KC = Hkv * D; // k/v row width
  const kappa = keep === null ? 1 : keepScale(dropP);
  const dp = scratch;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kvBase = b * kvBatchStride + Math.floor(h / group) * D;
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
          const vOff = kvBase + s * KC;
          dp[s] = w * dot(dout, qOff, v, vOff, D);
          pDotDp += p * (dp[s] as number);
          const pw = p * w;
          for (let d = 0; d < D; d++) dv[vOff + d] = (dv[vOff + d] as number) + pw * (dout[qOff + d] as number);
        }
        for (let s = 0; s < S; s++) {
          const p = probs[pOff + s] as number;
          if (p === 0) continue;
          const kOff = kvBase + s * KC;
          let dz = scale * p * ((dp[s] as number) - pDotDp);
          if (softCap > 0) {
            const th = Math.tanh((scale * dot(q, qOff, k, kOff, D)) / softCap);
            dz *= 1 - th * th;
          }
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
