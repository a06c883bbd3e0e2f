/**
 * Shared fixtures for the kernel tests: the list of backends every op suite runs over
 * (`describe.each(backendCases())`), dtype-dependent tolerances, seeded random inputs,
 * and comparisons that name the worst element.
 *
 * To run the suites on another backend, add it to `backendCases` with its tolerances.
 * Leaves out: the finite-difference checker itself (`../gradcheck.ts`).
 */

import { expect } from 'vitest';
import type { Backend, FloatArray } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { Rng } from '../../../../src/engine/rng';
import type { GradCheckResult } from '../gradcheck';

/** Mixed tolerance: |actual − expected| ≤ atol + rtol · |expected|. */
export interface Tolerance {
  readonly rtol: number;
  readonly atol: number;
}

/** One backend under test, with the tolerances its dtype allows. */
export interface BackendCase {
  readonly label: string;
  readonly backend: Backend;
  /** Forward values against a float64 oracle. */
  readonly tol: Tolerance;
  /** Backward against float64 finite differences (for gradCheck's rtol/atol). */
  readonly grad: Tolerance;
}

/**
 * Fresh instances of every backend the op suites run on. The WebAssembly backend computes
 * in float32 with SIMD lanes (sums grouped differently, a polynomial exp, A&S erf), so it
 * gets float32 tolerances a little wider than the reference's; it is left out only where
 * the runtime lacks WebAssembly SIMD.
 */
export function backendCases(): BackendCase[] {
  const wasmCase: BackendCase[] = [];
  for (const [label, fma] of [
    ['wasm simd', false],
    ['wasm simd+fma', true],
  ] as const) {
    const wasm = createWasmBackend({ fma });
    if (wasm !== null)
      wasmCase.push({ label, backend: wasm, tol: { rtol: 2e-5, atol: 2e-6 }, grad: { rtol: 1e-3, atol: 1e-5 } });
  }
  return [
    {
      label: 'reference f32',
      backend: createReferenceBackend(),
      tol: { rtol: 1e-5, atol: 1e-6 },
      grad: { rtol: 1e-3, atol: 1e-5 },
    },
    {
      label: 'reference f64',
      backend: createReferenceBackend({ dtype: 'f64' }),
      tol: { rtol: 1e-12, atol: 1e-13 },
      grad: { rtol: 1e-6, atol: 1e-8 },
    },
    ...wasmCase,
  ];
}

/** The float64 reference backend: the oracle for finite differences. */
export function oracle(): Backend {
  return createReferenceBackend({ dtype: 'f64' });
}

/**
 * n standard normal values (times `std`), rounded to float32 so that every backend —
 * float32 or float64 — sees exactly the same inputs.
 */
export function randn(rng: Rng, n: number, std = 1): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.fround(rng.normal() * std);
  return out;
}

/** A copy of `values` in a buffer allocated by `backend` (its own dtype). */
export function toBackend(backend: Backend, values: ArrayLike<number>): FloatArray {
  const buf = backend.alloc(values.length);
  for (let i = 0; i < values.length; i++) buf[i] = values[i] as number;
  return buf;
}

/** Σ_i out[i] · w[i] in float64: the scalar objective of the gradient checks. */
export function weightedSum(out: ArrayLike<number>, w: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < w.length; i++) s += (out[i] as number) * (w[i] as number);
  return s;
}

/**
 * Asserts element-wise closeness over the first expected.length elements, reporting the
 * worst index. NaN never passes; infinities must match exactly.
 */
export function expectClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: Tolerance,
  what = 'values',
): void {
  let worst = -1;
  let worstRatio = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i] as number;
    const e = expected[i] as number;
    let ratio: number;
    if (Number.isNaN(a) || Number.isNaN(e)) ratio = Infinity;
    else if (!Number.isFinite(e) || !Number.isFinite(a)) ratio = a === e ? 0 : Infinity;
    else ratio = Math.abs(a - e) / (tol.atol + tol.rtol * Math.abs(e));
    if (ratio > worstRatio) {
      worstRatio = ratio;
      worst = i;
    }
  }
  const msg =
    worst < 0
      ? ''
      : `${what}: worst at index ${worst}: got ${actual[worst]}, expected ${expected[worst]} (error/tolerance ${worstRatio.toPrecision(3)})`;
  expect(worstRatio <= 1, msg).toBe(true);
}

/** Asserts that a gradient check passed, with its own message on failure. */
export function expectGradOk(result: GradCheckResult): void {
  expect(result.checked).toBeGreaterThan(0);
  expect(result.ok, result.message).toBe(true);
}

/** Asserts every element is finite (no NaN, no ±Infinity). */
export function expectAllFinite(x: ArrayLike<number>, n = x.length, what = 'values'): void {
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(x[i] as number)) expect.fail(`${what}[${i}] = ${x[i]} is not finite`);
  }
}
