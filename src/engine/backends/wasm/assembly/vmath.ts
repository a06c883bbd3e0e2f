/**
 * Vector math on f32x4 lanes: exp, the normal CDF Φ, lane masks from bytes, horizontal
 * sums, and the split of n items into chunks.
 *
 * exp (expv): Cody–Waite range reduction x = n·ln2 + r, |r| ≤ ln2/2 (ln2 split in a short
 * high part and a correction so n·ln2_hi is exact), e^r by its Taylor series to degree 7
 * (truncation error < r⁸/8! ≈ 4e-9 relative), and 2^n built in the exponent bits.
 * Inputs below ln(2^-126) give exactly 0 (no denormals), which softmax relies on for masked
 * and −∞ scores; NaN stays NaN.
 *
 * Φ (phiTail): Abramowitz & Stegun, Handbook of Mathematical Functions (1964), 7.1.26:
 * erf(z) = 1 − (a1 t + … + a5 t⁵) e^(−z²), t = 1/(1 + p z), z ≥ 0, |error| ≤ 1.5e-7. With
 * z = |x|/√2 the factor e^(−z²) = e^(−x²/2) is also the normal density's, so GELU's forward
 * and backward share one exp. (The reference backend uses Cody's 1969 rational
 * approximations to ~1e-15; float32 cannot use more than ~1e-7.)
 *
 * tanh (tanhv): for |z| ≥ 1/4, (1 − e)/(1 + e) with e = e^(−2|z|) ≤ e^(−1/2), where 1 − e
 * keeps its digits; below, the odd Taylor series z − z³/3 + 2z⁵/15 − 17z⁷/315 + 62z⁹/2835
 * (truncation < 1e-8 relative), so small arguments keep their relative accuracy; the sign
 * is z's. Used by the soft-cap y = cap · tanh(x / cap).
 *
 * Leaves out: log (called once per row, in f64, from the standard library).
 */

/**
 * a·b + c per lane: one fused multiply-add (relaxed SIMD's f32x4.relaxed_madd) in the
 * build compiled with relaxed SIMD, a multiply then an add in the plain SIMD build.
 * relaxed_madd may round once (fused) or twice depending on the hardware; on one machine it
 * is always the same, so results stay repeatable and identical across threads.
 */
@inline export function fmadd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, c);
  return f32x4.add(f32x4.mul(a, b), c);
}

const LOG2E: f32 = 1.4426950408889634;
const LN2_HI: f32 = 0.693359375;
const LN2_LO: f32 = -2.1219444e-4;
const EXP_LO: f32 = -87.33654; // ln(2^-126): below it e^x would be denormal; flushed to 0
const EXP_HI: f32 = 88.0;
const ROUND_MAGIC: f32 = 12582912.0; // 1.5 · 2^23
const AS_P: f32 = 0.3275911 * 0.7071067811865476; // p / √2: t = 1 / (1 + p·|x|/√2)
const AS_A1: f32 = 0.254829592;
const AS_A2: f32 = -0.284496736;
const AS_A3: f32 = 1.421413741;
const AS_A4: f32 = -1.453152027;
const AS_A5: f32 = 1.061405429;

/**
 * The constants of the hot loops, in memory, read with one broadcast load each (`kc`).
 * Written as f32x4.splat(constant), each costs three instructions per use in the loop
 * (V8 11 builds the vector from an immediate every time and does not hoist it; binaryen
 * folds hoisted constant locals back into their uses), which made exp-heavy loops nearly
 * twice as slow. A load from memory is opaque to both, and costs one load-port µop.
 */
const KT: usize = memory.data<f32>([
  EXP_LO,
  EXP_HI,
  LOG2E,
  ROUND_MAGIC,
  -LN2_HI,
  -LN2_LO,
  1.0 / 5040.0,
  1.0 / 720.0,
  1.0 / 120.0,
  1.0 / 24.0,
  1.0 / 6.0,
  0.5,
  1.0,
  AS_P,
  AS_A5,
  AS_A4,
  AS_A3,
  AS_A2,
  AS_A1,
  -0.5,
  0.3989422804014327,
  -Infinity,
  -2.0 * 0.7978845608028654,
  2.0 * 0.7978845608028654,
  0.044715,
  3.0 * 0.044715,
  20.0,
  -20.0,
]);
export const K_EXP_LO = 0;
const K_EXP_HI = 1;
const K_LOG2E = 2;
const K_MAGIC = 3;
const K_NLN2_HI = 4;
const K_NLN2_LO = 5;
const K_C7 = 6;
const K_C6 = 7;
const K_C5 = 8;
const K_C4 = 9;
const K_C3 = 10;
export const K_HALF = 11;
export const K_ONE = 12;
const K_AS_P = 13;
const K_AS_A5 = 14;
const K_AS_A4 = 15;
const K_AS_A3 = 16;
const K_AS_A2 = 17;
const K_AS_A1 = 18;
export const K_MINUS_HALF = 19;
/** 1/√(2π), the normal density at 0. */
export const K_INV_SQRT_2PI = 20;
export const K_NEG_INF = 21;
/** −2√(2/π) and 2√(2/π): the tanh GELU's u = √(2/π)(x + 0.044715 x³), doubled. */
export const K_GELU_TANH_M2K = 22;
export const K_GELU_TANH_2K = 23;
/** 0.044715 and 3 · 0.044715, the tanh GELU's cubic term and its derivative. */
export const K_GELU_TANH_A = 24;
export const K_GELU_TANH_3A = 25;
/** ±20: beyond it the tanh GELU's slope is its asymptote (1 or 0) to float32 precision. */
export const K_GELU_TANH_XMAX = 26;
export const K_GELU_TANH_XMIN = 27;

/** tanh's constants (a table of its own): the Taylor coefficients, the switch point, −2. */
const KTANH: usize = memory.data<f32>([-1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0, 62.0 / 2835.0, 0.25, -2.0, 1.0]);
const KT_C3 = 0;
const KT_C5 = 1;
const KT_C7 = 2;
const KT_C9 = 3;
const KT_SMALL = 4;
const KT_M2 = 5;
const KT_ONE = 6;

@inline function ktanh(i: i32): v128 {
  return v128.load32_splat(KTANH + ((<usize>i) << 2));
}

/** Constant `i` of the table above in all four lanes (one broadcast load). */
@inline export function kc(i: i32): v128 {
  return v128.load32_splat(KT + ((<usize>i) << 2));
}

/**
 * Integer constants of the hot loops, in memory for the same reason as KT: lanes 0..3
 * (`iota`), the lane step 4, and lowbias32's two multipliers (the dropout-mask hash).
 */
const KI: usize = memory.data<u32>([0, 1, 2, 3, 4, 0x7feb352d, 0x846ca68b]);
export const KI_FOUR = 4;
export const KI_LOWBIAS_M1 = 5;
export const KI_LOWBIAS_M2 = 6;

/** Integer constant `i` of KI in all four lanes (one broadcast load). */
@inline export function kci(i: i32): v128 {
  return v128.load32_splat(KI + ((<usize>i) << 2));
}

/** Lanes 0, 1, 2, 3 as i32 (one load). */
@inline export function iota(): v128 {
  return v128.load(KI);
}

/** e^x per lane (see file header). */
@inline export function expv(x: v128): v128 {
  const xc = f32x4.pmin(f32x4.pmax(x, kc(K_EXP_LO)), kc(K_EXP_HI));
  // Round x·log2e to an integer n by adding 1.5·2^23: the sum's low mantissa bits then hold
  // n (offset by 0x4B400000), so n needs no float-to-int conversion.
  const t = fmadd(xc, kc(K_LOG2E), kc(K_MAGIC));
  const n = f32x4.sub(t, kc(K_MAGIC));
  let r = fmadd(n, kc(K_NLN2_HI), xc);
  r = fmadd(n, kc(K_NLN2_LO), r);
  let p = kc(K_C7);
  p = fmadd(p, r, kc(K_C6));
  p = fmadd(p, r, kc(K_C5));
  p = fmadd(p, r, kc(K_C4));
  p = fmadd(p, r, kc(K_C3));
  p = fmadd(p, r, kc(K_HALF));
  p = fmadd(p, r, kc(K_ONE));
  p = fmadd(p, r, kc(K_ONE));
  // 2^n: (n + 127) << 23, with n = bits(t) − 0x4B400000.
  const two = i32x4.shl(i32x4.add(t, i32x4.splat(127 - 0x4b400000)), 23);
  const y = f32x4.mul(p, two);
  return v128.andnot(y, f32x4.lt(x, kc(K_EXP_LO))); // below LO: 0; NaN stays NaN
}

/** tanh(z) per lane (see file header); NaN stays NaN, ±0 stays ±0. */
@inline export function tanhv(z: v128): v128 {
  const a = f32x4.abs(z);
  const one = ktanh(KT_ONE);
  const e = expv(f32x4.mul(a, ktanh(KT_M2)));
  const big = f32x4.div(f32x4.sub(one, e), f32x4.add(one, e));
  const z2 = f32x4.mul(a, a);
  let p = fmadd(ktanh(KT_C9), z2, ktanh(KT_C7));
  p = fmadd(p, z2, ktanh(KT_C5));
  p = fmadd(p, z2, ktanh(KT_C3));
  const small = fmadd(f32x4.mul(a, z2), p, a);
  const t = v128.bitselect(small, big, f32x4.lt(a, ktanh(KT_SMALL)));
  return v128.or(t, v128.and(z, i32x4.splat(i32.MIN_VALUE)));
}

/** e^x for one value, through lane 0 of expv (so scalar tails round exactly like vector lanes). */
@inline export function exps(x: f32): f32 {
  return f32x4.extract_lane(expv(f32x4.splat(x)), 0);
}

/**
 * Q = ½ · erfc(|x|/√2) from A&S 7.1.26, given e = exp(−x²/2): the normal tail beyond |x|.
 * Then Φ(x) = 1 − Q for x ≥ 0 and Q for x < 0.
 */
@inline export function phiTail(x: v128, e: v128): v128 {
  const one = kc(K_ONE);
  const t = f32x4.div(one, fmadd(kc(K_AS_P), f32x4.abs(x), one));
  let poly = kc(K_AS_A5);
  poly = fmadd(poly, t, kc(K_AS_A4));
  poly = fmadd(poly, t, kc(K_AS_A3));
  poly = fmadd(poly, t, kc(K_AS_A2));
  poly = fmadd(poly, t, kc(K_AS_A1));
  return f32x4.mul(f32x4.mul(kc(K_HALF), f32x4.mul(poly, t)), e);
}

/** Φ(x) per lane, given e = exp(−x²/2). */
@inline export function phiv(x: v128, e: v128): v128 {
  const q = phiTail(x, e);
  return v128.bitselect(f32x4.sub(kc(K_ONE), q), q, f32x4.ge(x, f32x4.splat(0)));
}

/** exp(−x²/2) per lane. */
@inline export function halfGauss(x: v128): v128 {
  return expv(f32x4.mul(kc(K_MINUS_HALF), f32x4.mul(x, x)));
}

/** All-ones lanes where the 4 bytes at m are non-zero (a mask or keep row). */
@inline export function byteLanes(m: usize): v128 {
  const w = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(m)));
  return i32x4.ne(w, i32x4.splat(0));
}

/** All-ones lanes where the 4 bytes at m equal 1 (a dropout keep mask). */
@inline export function keepLanes(m: usize): v128 {
  const w = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(m)));
  return i32x4.eq(w, i32x4.splat(1));
}

/** Lanes summed in order 0, 1, 2, 3. */
@inline export function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3);
}

/** Largest lane. */
@inline export function hmax(v: v128): f32 {
  return max(
    max(f32x4.extract_lane(v, 0), f32x4.extract_lane(v, 1)),
    max(f32x4.extract_lane(v, 2), f32x4.extract_lane(v, 3)),
  );
}

/** First element of part `part` of `parts` of n elements, parts aligned to 16 elements. */
@inline export function rangeLo(n: i32, part: i32, parts: i32): i32 {
  const units = (n + 15) >> 4;
  return min(n, (<i32>((<i64>units * <i64>part) / <i64>parts)) << 4);
}
