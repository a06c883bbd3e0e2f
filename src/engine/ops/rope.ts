/**
 * Rotary position embeddings (Su et al., "RoFormer: Enhanced Transformer with Rotary
 * Position Embedding", 2021) in Hugging Face's rotate-half layout, the one Llama, Qwen,
 * GPT-NeoX and nanochat checkpoints use: within each head of D channels, the first R
 * (the rotary channels, R even, R ≤ D) form the pairs (c, c + R/2) for c < R/2, and pair i
 * turns by the angle p · θ_i, θ_i = theta^(−2i/R), p the absolute position:
 *   x1' = x1 · cos − x2 · sin,   x2' = x2 · cos + x1 · sin.
 * Channels R..D−1 pass through unchanged (partial rotary, as in Pythia/GPT-NeoX).
 *
 * A rotation is linear and orthogonal, so its backward is the rotation by −angle applied to
 * the gradient: the kernel works in place and takes an `inverse` flag.
 *
 * Frequency scaling (`ropeInvFreq`) changes only the θ_i, exactly as Hugging Face's
 * modeling_rope_utils computes them: `linear` (position interpolation, Chen et al. 2023: every θ_i
 * divided by the factor; Gemma 3's global layers from 4B up) and `llama3` (Llama 3.1 and 3.2: the
 * low frequencies divided by the factor, the high ones kept, the band between blended smoothly).
 *
 * Leaves out: other layouts (GPT-J's interleaved pairs), the other scalings (dynamic NTK, YaRN,
 * LongRoPE: their tables depend on the sequence length or rescale cos/sin), and ALiBi (alibi.ts),
 * which adds to the attention scores instead.
 */

import type { FloatArray } from '../backend';

/** cos and sin tables [positions, R/2], as built by {@link ropeTables}. */
export interface RopeTables {
  readonly cos: FloatArray;
  readonly sin: FloatArray;
}

/**
 * A RoPE frequency scaling, as config.json's `rope_scaling` (or `rope_parameters`) states it.
 * `linear`: θ_i / factor. `llama3`: with wavelength λ_i = 2π / θ_i, λ_i above
 * originalMaxLen / lowFreqFactor gives θ_i / factor, λ_i below originalMaxLen / highFreqFactor keeps
 * θ_i, and between them s = (originalMaxLen / λ_i − lowFreqFactor) / (highFreqFactor − lowFreqFactor)
 * blends (1 − s) · θ_i / factor + s · θ_i.
 */
export type RopeScaling =
  | { readonly type: 'linear'; readonly factor: number }
  | {
      readonly type: 'llama3';
      readonly factor: number;
      readonly lowFreqFactor: number;
      readonly highFreqFactor: number;
      readonly originalMaxLen: number;
    };

/** The fields of a model config that state its RoPE scaling (engine/config.ts `ModelConfig`). */
export interface RopeScalingFields {
  readonly ropeScaling: 'none' | 'linear' | 'llama3';
  readonly ropeScalingFactor: number;
  readonly ropeLowFreqFactor: number;
  readonly ropeHighFreqFactor: number;
  readonly ropeOriginalMaxLen: number;
}

/** The scaling a config's fields state, or null for none. */
export function ropeScalingOf(c: RopeScalingFields): RopeScaling | null {
  if (c.ropeScaling === 'linear') return { type: 'linear', factor: c.ropeScalingFactor };
  if (c.ropeScaling === 'llama3')
    return {
      type: 'llama3',
      factor: c.ropeScalingFactor,
      lowFreqFactor: c.ropeLowFreqFactor,
      highFreqFactor: c.ropeHighFreqFactor,
      originalMaxLen: c.ropeOriginalMaxLen,
    };
  return null;
}

/** A short key that tells scalings apart (the attention layers share tables by θ, R, positions and this). */
export function ropeScalingKey(s: RopeScaling | null): string {
  if (s === null) return 'none';
  if (s.type === 'linear') return `linear.${s.factor}`;
  return `llama3.${s.factor}.${s.lowFreqFactor}.${s.highFreqFactor}.${s.originalMaxLen}`;
}

/**
 * RoPE's R/2 frequencies θ_i = theta^(−2i/R), in float64, with `scaling` applied as Hugging Face's
 * `_compute_linear_scaling_rope_parameters` and `_compute_llama3_parameters` do.
 */
export function ropeInvFreq(theta: number, R: number, scaling: RopeScaling | null = null): Float64Array {
  const half = R >> 1;
  const out = new Float64Array(half);
  for (let i = 0; i < half; i++) {
    const f = Math.pow(theta, (-2 * i) / R);
    if (scaling === null) out[i] = f;
    else if (scaling.type === 'linear') out[i] = f / scaling.factor;
    else {
      const { factor, lowFreqFactor: lo, highFreqFactor: hi, originalMaxLen: old } = scaling;
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < old / hi) out[i] = f;
      else if (wavelen > old / lo) out[i] = f / factor;
      else {
        const s = (old / wavelen - lo) / (hi - lo);
        out[i] = ((1 - s) * f) / factor + s * f;
      }
    }
  }
  return out;
}

/**
 * Builds the cos/sin tables [positions, R/2]: entry (p, i) = cos/sin(p · θ_i), θ_i from
 * {@link ropeInvFreq} (theta^(−2i/R), scaled when `scaling` is given), computed in float64
 * (Math.pow, Math.cos, Math.sin) and then stored in the buffers that `alloc` returns (rounded to
 * float32 if they are). Use the backend's `alloc` so its kernels read the tables in place.
 */
export function ropeTables(
  theta: number,
  R: number,
  positions: number,
  alloc: (n: number) => FloatArray,
  scaling: RopeScaling | null = null,
): RopeTables {
  const half = R >> 1;
  const cos = alloc(positions * half);
  const sin = alloc(positions * half);
  const inv = ropeInvFreq(theta, R, scaling);
  for (let i = 0; i < half; i++) {
    const freq = inv[i] as number;
    for (let p = 0; p < positions; p++) {
      const angle = p * freq;
      cos[p * half + i] = Math.cos(angle);
      sin[p * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

/**
 * RoPE in place on x: element (b, t, h, c) lives at b·batchStride + t·rowStride + h·D + c,
 * position p = start + t reads row p of the tables [positions, R/2]. With `inverse` the
 * rotation is by −angle (x1' = x1·cos + x2·sin, x2' = x2·cos − x1·sin): applied in place to
 * the gradient of the rotated tensor it gives the gradient of the input — an exception to
 * "backward accumulates". Channels R..D−1 are not touched.
 */
export function rope(
  x: FloatArray,
  cos: FloatArray,
  sin: FloatArray,
  B: number,
  T: number,
  H: number,
  D: number,
  R: number,
  start: number,
  batchStride: number,
  rowStride: number,
  inverse: boolean,
): void {
  const half = R >> 1;
  const sign = inverse ? -1 : 1;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const table = (start + t) * half;
      for (let h = 0; h < H; h++) {
        const base = b * batchStride + t * rowStride + h * D;
        for (let i = 0; i < half; i++) {
          const co = cos[table + i] as number;
          const si = sign * (sin[table + i] as number);
          const x1 = x[base + i] as number;
          const x2 = x[base + half + i] as number;
          x[base + i] = x1 * co - x2 * si;
          x[base + half + i] = x2 * co + x1 * si;
        }
      }
    }
  }
}
