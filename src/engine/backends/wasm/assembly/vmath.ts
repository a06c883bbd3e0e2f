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
 * Leaves out: log (called once per row, in f64, from the standard library).
 */

const LOG2E: f32 = 1.4426950408889634;
const LN2_HI: f32 = 0.693359375;
const LN2_LO: f32 = -2.12194440e-4;
const EXP_LO: f32 = -87.33654; // ln(2^-126): below it e^x would be denormal; flushed to 0
const EXP_HI: f32 = 88.0;
const ROUND_MAGIC: f32 = 12582912.0; // 1.5 · 2^23

/** e^x per lane (see file header). */
@inline export function expv(x: v128): v128 {
  const xc = f32x4.pmin(f32x4.pmax(x, f32x4.splat(EXP_LO)), f32x4.splat(EXP_HI));
  // Round x·log2e to an integer n by adding 1.5·2^23: the sum's low mantissa bits then hold
  // n (offset by 0x4B400000), so n needs no float-to-int conversion.
  const t = f32x4.add(f32x4.mul(xc, f32x4.splat(LOG2E)), f32x4.splat(ROUND_MAGIC));
  const n = f32x4.sub(t, f32x4.splat(ROUND_MAGIC));
  let r = f32x4.sub(xc, f32x4.mul(n, f32x4.splat(LN2_HI)));
  r = f32x4.sub(r, f32x4.mul(n, f32x4.splat(LN2_LO)));
  let p = f32x4.splat(1.0 / 5040.0);
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.0 / 720.0));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.0 / 120.0));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.0 / 24.0));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.0 / 6.0));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(0.5));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.0));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.0));
  // 2^n: (n + 127) << 23, with n = bits(t) − 0x4B400000.
  const two = i32x4.shl(i32x4.add(t, i32x4.splat(127 - 0x4b400000)), 23);
  const y = f32x4.mul(p, two);
  return v128.andnot(y, f32x4.lt(x, f32x4.splat(EXP_LO))); // below LO: 0; NaN stays NaN
}

/** e^x for one value, through lane 0 of expv (so scalar tails round exactly like vector lanes). */
@inline export function exps(x: f32): f32 {
  return f32x4.extract_lane(expv(f32x4.splat(x)), 0);
}

const AS_P: f32 = 0.3275911 * 0.7071067811865476; // p / √2: t = 1 / (1 + p·|x|/√2)
const AS_A1: f32 = 0.254829592;
const AS_A2: f32 = -0.284496736;
const AS_A3: f32 = 1.421413741;
const AS_A4: f32 = -1.453152027;
const AS_A5: f32 = 1.061405429;

/**
 * Q = ½ · erfc(|x|/√2) from A&S 7.1.26, given e = exp(−x²/2): the normal tail beyond |x|.
 * Then Φ(x) = 1 − Q for x ≥ 0 and Q for x < 0.
 */
@inline export function phiTail(x: v128, e: v128): v128 {
  const t = f32x4.div(f32x4.splat(1), f32x4.add(f32x4.splat(1), f32x4.mul(f32x4.splat(AS_P), f32x4.abs(x))));
  let poly = f32x4.splat(AS_A5);
  poly = f32x4.add(f32x4.mul(poly, t), f32x4.splat(AS_A4));
  poly = f32x4.add(f32x4.mul(poly, t), f32x4.splat(AS_A3));
  poly = f32x4.add(f32x4.mul(poly, t), f32x4.splat(AS_A2));
  poly = f32x4.add(f32x4.mul(poly, t), f32x4.splat(AS_A1));
  return f32x4.mul(f32x4.mul(f32x4.splat(0.5), f32x4.mul(poly, t)), e);
}

/** Φ(x) per lane, given e = exp(−x²/2). */
@inline export function phiv(x: v128, e: v128): v128 {
  const q = phiTail(x, e);
  return v128.bitselect(f32x4.sub(f32x4.splat(1), q), q, f32x4.ge(x, f32x4.splat(0)));
}

/** exp(−x²/2) per lane. */
@inline export function halfGauss(x: v128): v128 {
  return expv(f32x4.mul(f32x4.splat(-0.5), f32x4.mul(x, x)));
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
  return max(max(f32x4.extract_lane(v, 0), f32x4.extract_lane(v, 1)), max(f32x4.extract_lane(v, 2), f32x4.extract_lane(v, 3)));
}

/** First element of part `part` of `parts` of n elements, parts aligned to 16 elements. */
@inline export function rangeLo(n: i32, part: i32, parts: i32): i32 {
  const units = (n + 15) >> 4;
  return min(n, <i32>((<i64>units * <i64>part) / <i64>parts) << 4);
}
