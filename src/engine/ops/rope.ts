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
 * Leaves out: other layouts (GPT-J's interleaved pairs), frequency scaling (NTK, YaRN), and
 * ALiBi (alibi.ts), which adds to the attention scores instead.
 */

import type { FloatArray } from '../backend';

/** cos and sin tables [positions, R/2], as built by {@link ropeTables}. */
export interface RopeTables {
  readonly cos: FloatArray;
  readonly sin: FloatArray;
}

/**
 * Builds the cos/sin tables [positions, R/2]: entry (p, i) = cos/sin(p · theta^(−2i/R)),
 * computed in float64 (Math.pow, Math.cos, Math.sin) and then stored in the buffers that
 * `alloc` returns (rounded to float32 if they are). Use the backend's `alloc` so its kernels
 * read the tables in place.
 */
export function ropeTables(theta: number, R: number, positions: number, alloc: (n: number) => FloatArray): RopeTables {
  const half = R >> 1;
  const cos = alloc(positions * half);
  const sin = alloc(positions * half);
  for (let i = 0; i < half; i++) {
    const freq = Math.pow(theta, (-2 * i) / R);
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
