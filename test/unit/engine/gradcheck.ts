/**
 * Finite-difference gradient checking, shared by the op tests and the whole-model tests.
 *
 * `gradCheck` perturbs one input element at a time, evaluates a scalar objective on both
 * sides (central differences, error O(eps²)), and compares the slope with an analytic
 * gradient under a mixed tolerance |analytic − numeric| ≤ atol + rtol · max(|analytic|, |numeric|).
 * It reports the worst element, so a failure says where to look.
 *
 * Leaves out: computing the analytic gradient (the caller runs its backward first) and
 * second derivatives.
 */

import type { FloatArray } from '../../../src/engine/backend';

/** Options of {@link gradCheck}; every field has a default suited to float64 objectives. */
export interface GradCheckOptions {
  /** Finite-difference half-step. Default 1e-6 (float64); use ~1e-3 if `x` is a Float32Array. */
  readonly eps?: number;
  /** Relative tolerance. Default 1e-6. */
  readonly rtol?: number;
  /** Absolute tolerance. Default 1e-8. */
  readonly atol?: number;
  /**
   * Check at most this many elements, evenly spaced over x (always including the first and
   * last), instead of all of them — for large parameter tensors in model checks.
   */
  readonly maxChecks?: number;
  /** Check exactly these indices (overrides maxChecks). */
  readonly indices?: readonly number[];
}

/** Outcome of {@link gradCheck}. */
export interface GradCheckResult {
  /** True when every checked element is within tolerance. */
  readonly ok: boolean;
  /** How many elements were checked. */
  readonly checked: number;
  /** Index of the element with the largest error relative to its tolerance (-1 if none checked). */
  readonly worstIndex: number;
  /** Analytic and numeric gradient at worstIndex. */
  readonly analytic: number;
  readonly numeric: number;
  /** |analytic − numeric| / (atol + rtol · max(|analytic|, |numeric|)) at worstIndex; ok ⇔ ≤ 1. */
  readonly worstRatio: number;
  /** One line for a test failure: where, both values, and the ratio. */
  readonly message: string;
}

function pickIndices(n: number, opts: GradCheckOptions): readonly number[] {
  if (opts.indices !== undefined) return opts.indices;
  const max = opts.maxChecks ?? n;
  if (max >= n) return Array.from({ length: n }, (_, i) => i);
  if (max <= 1) return n > 0 ? [0] : [];
  return Array.from({ length: max }, (_, j) => Math.round((j * (n - 1)) / (max - 1)));
}

/**
 * Checks `analytic` = ∂f/∂x by central differences: for each chosen i,
 * numeric_i = (f(x + h·e_i) − f(x − h·e_i)) / (x⁺_i − x⁻_i), using the values actually
 * stored (so a Float32Array's rounding of x ± eps does not bias the slope). `f` must read
 * `x` afresh on every call and be deterministic; x is restored exactly after each probe.
 * The objective should be computed in float64 (e.g. the reference backend with dtype 'f64').
 *
 * @param f scalar objective, e.g. Σ(out ⊙ w) for fixed random weights w (then the
 *   analytic gradient comes from backward with dout = w).
 * @param x the input being perturbed in place.
 * @param analytic the gradient under test, same length as x.
 */
export function gradCheck(
  f: () => number,
  x: FloatArray,
  analytic: FloatArray,
  opts: GradCheckOptions = {},
): GradCheckResult {
  const eps = opts.eps ?? 1e-6;
  const rtol = opts.rtol ?? 1e-6;
  const atol = opts.atol ?? 1e-8;
  if (analytic.length < x.length) {
    throw new Error(`gradCheck: analytic gradient has ${analytic.length} elements, x has ${x.length}`);
  }
  const indices = pickIndices(x.length, opts);
  let worstIndex = -1;
  let worstRatio = -1;
  let worstA = 0;
  let worstN = 0;
  for (const i of indices) {
    const orig = x[i] as number;
    x[i] = orig + eps;
    const xp = x[i] as number;
    const fp = f();
    x[i] = orig - eps;
    const xm = x[i] as number;
    const fm = f();
    x[i] = orig;
    const numeric = (fp - fm) / (xp - xm);
    const a = analytic[i] as number;
    const tol = atol + rtol * Math.max(Math.abs(a), Math.abs(numeric));
    const err = Math.abs(a - numeric);
    // NaN anywhere counts as the worst possible error.
    const ratio = Number.isNaN(err) ? Infinity : err / tol;
    if (ratio > worstRatio) {
      worstRatio = ratio;
      worstIndex = i;
      worstA = a;
      worstN = numeric;
    }
  }
  const ok = worstIndex === -1 || worstRatio <= 1;
  const message =
    worstIndex === -1
      ? 'gradCheck: no elements checked'
      : `gradCheck ${ok ? 'passed' : 'FAILED'} over ${indices.length} elements: worst at index ${worstIndex}, ` +
        `analytic ${worstA}, numeric ${worstN}, error/tolerance ${worstRatio.toPrecision(3)} ` +
        `(rtol ${rtol}, atol ${atol}, eps ${eps})`;
  return { ok, checked: indices.length, worstIndex, analytic: worstA, numeric: worstN, worstRatio, message };
}
