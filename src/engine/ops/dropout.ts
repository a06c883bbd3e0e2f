/**
 * Inverted dropout (Srivastava et al., 2014, as used by Vaswani et al. §5.4): kept units
 * are scaled by 1 / (1 − p) at training time so inference needs no rescaling; and the
 * keep-mask generator the models draw masks with.
 *
 * The keep-mask is counter-based (the idea of Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC 2011): keep[i] = 1 iff hash(key, i) ≥ threshold(p), a pure function
 * of a 64-bit key and the index, so any element can be computed alone — by SIMD lanes and
 * by threads in any split — and both backends give the same bytes. The caller draws the
 * key (two words) from its seeded `Rng` per mask (`drawKeepMask`, below), so all
 * randomness still comes from the Rng's state and a resumed run draws the same masks.
 * The hash is two rounds of Wellons's lowbias32 mixer ("Prospecting for Hash Functions",
 * nullprogram.com, 2018; a MurmurHash3-fmix32-style xorshift-multiply bijection with
 * better avalanche), with one key word injected before each round:
 *   h = lowbias32(lowbias32(i ⊕ key0) ⊕ key1).
 * The threshold is ⌈p · 2³²⌉, so P(keep) = 1 − p to 2⁻³², as `u32 / 2³² ≥ p` gave.
 *
 * Leaves out: the Rng that supplies the key (the caller's) and the SIMD version of the mask
 * (backends/wasm/assembly/pointwise.ts, which must stay bit-identical to this one).
 */

import type { FloatArray, Kernels } from '../backend';
import type { Rng } from '../rng';

/**
 * Scale applied to kept units, 1 / (1 − p). p ≥ 1 drops everything, so the scale is 0
 * rather than 1/0 (0 · Infinity would be NaN). Shared with attention's probability dropout.
 */
export function keepScale(p: number): number {
  return p >= 1 ? 0 : 1 / (1 - p);
}

/** 2³²: hash values are below it, so a threshold equal to it keeps nothing. */
const TWO_32 = 4294967296;

/**
 * The keep threshold for drop probability p: ⌈p · 2³²⌉, clamped to [0, 2³²]. p ≤ 0 (or
 * NaN) gives 0, which keeps everything; p ≥ 1 gives 2³², which keeps nothing.
 */
export function keepThreshold(p: number): number {
  if (!(p > 0)) return 0;
  return Math.min(Math.ceil(p * TWO_32), TWO_32);
}

/**
 * lowbias32 (Wellons 2018): x ⊕= x ≫ 16; x ·= 0x7feb352d; x ⊕= x ≫ 15; x ·= 0x846ca68b;
 * x ⊕= x ≫ 16, all mod 2³². A bijection of 32-bit words; returns it unsigned.
 */
function lowbias32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * The mask's hash of element i under key (key0, key1): lowbias32(lowbias32(i ⊕ key0) ⊕ key1),
 * an unsigned 32-bit value. Keys are taken mod 2³² (as JavaScript's ⊕ does).
 */
export function dropoutHash(i: number, key0: number, key1: number): number {
  return lowbias32(lowbias32(i ^ key0) ^ key1);
}

/**
 * keep[i] = 1 if dropoutHash(i, key0, key1) ≥ keepThreshold(p), else 0, for i < n
 * (overwrites keep[0..n)): each element is kept with probability 1 − p.
 */
export function dropoutMask(keep: Uint8Array, n: number, p: number, key0: number, key1: number): void {
  const threshold = keepThreshold(p);
  for (let i = 0; i < n; i++) keep[i] = dropoutHash(i, key0, key1) >= threshold ? 1 : 0;
}

/**
 * y = x · keep / (1 − p). With p = 0 this is a plain copy and `keep` is ignored (it may be
 * stale or all zeros), so turning dropout off never depends on the mask's contents.
 */
export function dropoutForward(y: FloatArray, x: FloatArray, keep: Uint8Array, n: number, p: number): void {
  if (p === 0) {
    for (let i = 0; i < n; i++) y[i] = x[i] as number;
    return;
  }
  const s = keepScale(p);
  for (let i = 0; i < n; i++) y[i] = keep[i] === 1 ? (x[i] as number) * s : 0;
}

/**
 * Differentiates y = x · keep / (1 − p): dx += dy · keep / (1 − p) (accumulates; with
 * p = 0, dx += dy).
 */
export function dropoutBackward(dx: FloatArray, dy: FloatArray, keep: Uint8Array, n: number, p: number): void {
  if (p === 0) {
    for (let i = 0; i < n; i++) dx[i] = (dx[i] as number) + (dy[i] as number);
    return;
  }
  const s = keepScale(p);
  for (let i = 0; i < n; i++) {
    if (keep[i] === 1) dx[i] = (dx[i] as number) + (dy[i] as number) * s;
  }
}

const REFERENCE_MASK: Pick<Kernels, 'dropoutMask'> = { dropoutMask };

/**
 * Draws a dropout keep-mask from `rng`: a fresh key, the next two words of the stream
 * (key0 first), then `kernels.dropoutMask` (the models pass their backend; the default is
 * the reference kernel). Each mask advances the rng by exactly two words, whatever n is.
 */
export function drawKeepMask(
  keep: Uint8Array,
  n: number,
  p: number,
  rng: Rng,
  kernels: Pick<Kernels, 'dropoutMask'> = REFERENCE_MASK,
): void {
  const key0 = rng.nextU32();
  const key1 = rng.nextU32();
  kernels.dropoutMask(keep, n, p, key0, key1);
}
