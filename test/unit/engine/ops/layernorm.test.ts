import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

/** Direct per-row LayerNorm in float64: biased variance, eps inside the root. */
function naiveLayernorm(
  x: ArrayLike<number>,
  w: ArrayLike<number>,
  b: ArrayLike<number> | null,
  N: number,
  C: number,
  eps: number,
): { y: Float64Array; mean: Float64Array; rstd: Float64Array } {
  const y = new Float64Array(N * C);
  const mean = new Float64Array(N);
  const rstd = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    const row = Array.from({ length: C }, (_, c) => x[n * C + c] as number);
    const mu = row.reduce((s, v) => s + v, 0) / C;
    const variance = row.reduce((s, v) => s + (v - mu) ** 2, 0) / C;
    const rs = 1 / Math.sqrt(variance + eps);
    mean[n] = mu;
    rstd[n] = rs;
    for (let c = 0; c < C; c++) {
      y[n * C + c] = ((row[c] as number) - mu) * rs * (w[c] as number) + (b === null ? 0 : (b[c] as number));
    }
  }
  return { y, mean, rstd };
}

describe.each(backendCases())('layernorm ($label)', ({ backend, tol, grad }) => {
  it('normalizes a hand-checkable row: [1,2,3,4] → mean 2.5, var 1.25', () => {
    const y = backend.alloc(4);
    const mean = backend.alloc(1);
    const rstd = backend.alloc(1);
    backend.layernormForward(
      y,
      mean,
      rstd,
      toBackend(backend, [1, 2, 3, 4]),
      toBackend(backend, [1, 1, 1, 1]),
      null,
      1,
      4,
      0,
    );
    const s = 1 / Math.sqrt(1.25);
    expectClose(y, [-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s], tol);
    expectClose(mean, [2.5], tol);
    expectClose(rstd, [s], tol);
  });

  it.each([true, false])('forward matches the direct formula on random rows (bias: %s)', (withBias) => {
    const rng = new Rng(41);
    const [N, C, eps] = [5, 7, 1e-5];
    const x = randn(rng, N * C, 3).map((v) => v + 10); // mean ≫ std: two-pass variance matters
    const w = randn(rng, C);
    const b = withBias ? randn(rng, C) : null;
    const y = backend.alloc(N * C);
    const mean = backend.alloc(N);
    const rstd = backend.alloc(N);
    backend.layernormForward(
      y,
      mean,
      rstd,
      toBackend(backend, x),
      toBackend(backend, w),
      b && toBackend(backend, b),
      N,
      C,
      eps,
    );
    const expected = naiveLayernorm(x, w, b, N, C, eps);
    expectClose(y, expected.y, tol, 'y');
    expectClose(mean, expected.mean, tol, 'mean');
    expectClose(rstd, expected.rstd, tol, 'rstd');
  });

  it('a constant row gives b (not NaN) thanks to eps', () => {
    const y = backend.alloc(3);
    backend.layernormForward(
      y,
      backend.alloc(1),
      backend.alloc(1),
      toBackend(backend, [4, 4, 4]),
      toBackend(backend, [2, 2, 2]),
      toBackend(backend, [0.5, -1, 3]),
      1,
      3,
      1e-5,
    );
    expectClose(y, [0.5, -1, 3], tol);
  });

  it.each([true, false])('backward matches finite differences for x, w and b (bias: %s)', (withBias) => {
    const rng = new Rng(42);
    const [N, C, eps] = [4, 6, 1e-5];
    const x = randn(rng, N * C, 2);
    const w = randn(rng, C);
    const b = withBias ? randn(rng, C) : null;
    const r = randn(rng, N * C);
    // Analytic, on the backend under test.
    const y = backend.alloc(N * C);
    const mean = backend.alloc(N);
    const rstd = backend.alloc(N);
    const bx = toBackend(backend, x);
    const bw = toBackend(backend, w);
    backend.layernormForward(y, mean, rstd, bx, bw, b && toBackend(backend, b), N, C, eps);
    const dx = backend.alloc(N * C);
    const dw = backend.alloc(C);
    const db = withBias ? backend.alloc(C) : null;
    backend.layernormBackward(dx, dw, db, toBackend(backend, r), bx, mean, rstd, bw, N, C);
    // Numeric, on the float64 oracle.
    const ref = oracle();
    const y64 = new Float64Array(N * C);
    const m64 = new Float64Array(N);
    const r64 = new Float64Array(N);
    const f = (): number => {
      ref.layernormForward(y64, m64, r64, x, w, b, N, C, eps);
      return weightedSum(y64, r);
    };
    expectGradOk(gradCheck(f, x, dx, grad));
    expectGradOk(gradCheck(f, w, dw, grad));
    if (b !== null && db !== null) expectGradOk(gradCheck(f, b, db, grad));

    // Accumulation: a second call doubles every gradient.
    const once = [Array.from(dx), Array.from(dw), db === null ? [] : Array.from(db)] as const;
    backend.layernormBackward(dx, dw, db, toBackend(backend, r), bx, mean, rstd, bw, N, C);
    expectClose(
      dx,
      once[0].map((v) => 2 * v),
      tol,
      'dx twice',
    );
    expectClose(
      dw,
      once[1].map((v) => 2 * v),
      tol,
      'dw twice',
    );
    if (db !== null)
      expectClose(
        db,
        once[2].map((v) => 2 * v),
        tol,
        'db twice',
      );
  });

  it('dx sums to zero per row (the mean is subtracted out)', () => {
    const rng = new Rng(43);
    const [N, C] = [3, 8];
    const x = toBackend(backend, randn(rng, N * C));
    const w = toBackend(backend, randn(rng, C));
    const mean = backend.alloc(N);
    const rstd = backend.alloc(N);
    backend.layernormForward(backend.alloc(N * C), mean, rstd, x, w, null, N, C, 1e-5);
    const dx = backend.alloc(N * C);
    backend.layernormBackward(
      dx,
      backend.alloc(C),
      null,
      toBackend(backend, randn(rng, N * C)),
      x,
      mean,
      rstd,
      w,
      N,
      C,
    );
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let c = 0; c < C; c++) s += dx[n * C + c] as number;
      expect(Math.abs(s)).toBeLessThan(1e-4);
    }
  });
});
