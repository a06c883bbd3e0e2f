/**
 * The two 16-bit float formats checkpoints are shared in, to and from float32:
 * - F16, IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits;
 * - BF16, bfloat16 (Google Brain): the top 16 bits of a float32 (8 exponent bits, 7 mantissa).
 * Widening is exact for every value, subnormals, ±0, ±∞ and NaN included (NaN payloads keep
 * their top bits). Narrowing rounds to nearest, ties to even, as PyTorch's `.half()` and
 * `.bfloat16()` do; values past the largest finite half become ±∞, NaN stays NaN.
 *
 * Bulk functions read little-endian bytes (the safetensors byte order), so they work on any
 * host. Leaves out: the 8-bit and 6-bit float formats.
 */

/** float32 of the F16 bit pattern `h` (0..0xFFFF). */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24; // zero or subnormal: mant · 2^-14 · 2^-10
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** float32 of the BF16 bit pattern `h` (0..0xFFFF): the high half of a float32. */
export function bf16ToF32(h: number): number {
  U32[0] = (h & 0xffff) << 16;
  return F32[0] as number;
}

/** The F16 bit pattern nearest to `x` (ties to even); ±∞ past 65504, NaN as 0x7E00. */
export function f32ToF16(x: number): number {
  const bits = f32Bits(x);
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return mant === 0 ? sign | 0x7c00 : sign | 0x7e00 | (mant >>> 13);
  const e = exp - 127 + 15; // the exponent re-biased for F16
  if (e >= 0x1f) return sign | 0x7c00; // overflow before rounding
  if (e <= 0) {
    // Subnormal F16 (or zero): shift the mantissa, with its implicit 1, right by 14 - e bits.
    if (e < -10) return sign; // below half the smallest subnormal: rounds to ±0
    const m = mant | 0x800000;
    const shift = 14 - e;
    return sign | roundShift(m, shift);
  }
  // Normal: keep 10 mantissa bits; a carry out of the mantissa bumps the exponent (to ∞ at the top).
  return sign | ((e << 10) + roundShift(mant, 13));
}

/** The BF16 bit pattern nearest to `x` (ties to even); NaN stays a quiet NaN. */
export function f32ToBf16(x: number): number {
  const bits = f32Bits(x);
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** m >> shift rounded to nearest, ties to even. */
function roundShift(m: number, shift: number): number {
  const q = m >>> shift;
  const rem = m - q * 2 ** shift;
  const half = 2 ** (shift - 1);
  return rem > half || (rem === half && (q & 1) === 1) ? q + 1 : q;
}

/** One float32 and its bits, shared by every call (no allocation per value: checkpoints hold millions). */
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

function f32Bits(x: number): number {
  F32[0] = x;
  return U32[0] as number;
}

/**
 * Widens `count` little-endian 16-bit floats of `dtype` from `src` (byte offset 0) into
 * `dst` at element `at`.
 */
export function widenHalf(dtype: 'F16' | 'BF16', src: Uint8Array, dst: Float32Array, at: number, count: number): void {
  if (dtype === 'BF16') {
    // BF16 is a float32 with its low 16 bits dropped: put them back as zeros.
    const out = new Uint32Array(dst.buffer, dst.byteOffset, dst.length);
    for (let i = 0; i < count; i++) out[at + i] = ((src[2 * i] as number) | ((src[2 * i + 1] as number) << 8)) << 16;
    return;
  }
  for (let i = 0; i < count; i++) dst[at + i] = f16ToF32((src[2 * i] as number) | ((src[2 * i + 1] as number) << 8));
}
