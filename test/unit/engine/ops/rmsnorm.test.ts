import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

/** Direct per-row RMSNorm in float64: y = x / sqrt(mean(x²) + eps) · w. */
function naiveRmsnorm(
  x: ArrayLike<number>,
  w: ArrayLike<number> | null,
  N: number,
  C: number,
  eps: number,
): { y: Float64Array; rstd: Float64Array } {
  const y = new Float64Array(N * C);
  const rstd = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    const row = Array.from({ length: C }, (_, c) => x[n * C + c] as number);
    const rs = 1 / Math.sqrt(row.reduce((s, v) => s + v * v, 0) / C + eps);
    rstd[n] = rs;
    for (let c = 0; c < C; c++) y[n * C + c] = (row[c] as number) * rs * (w === null ? 1 : (w[c] as number));
  }
  return { y, rstd };
}

describe.each(backendCases())('rmsnorm ($label)', ({ backend, tol, grad }) => {
  it('normalizes a hand-checkable row: [1,2,3,4] has mean square 7.5, no mean subtracted', () => {
    const y = backend.alloc(4);
    const rstd = backend.alloc(1);
    const x = toBackend(backend, [1, 2, 3, 4]);
    backend.rmsnormForward(y, rstd, x, toBackend(backend, [1, 2, 1, 0.5]), 1, 4, 0);
    const s = 1 / Math.sqrt(7.5);
    expectClose(y, [s, 4 * s, 3 * s, 2 * s], tol);
    expectClose(rstd, [s], tol);
    // Without a weight (nanochat's RMSNorm), and in place.
    backend.rmsnormForward(x, rstd, x, null, 1, 4, 0);
    expectClose(x, [s, 2 * s, 3 * s, 4 * s], tol);
  });

  it.each([true, false])(
    'forward matches the direct formula on shapes not a multiple of 4 (weight: %s)',
    (withWeight) => {
      for (const [N, C] of [
        [5, 7],
        [3, 64],
        [2, 130],
        [1, 1],
      ] as const) {
        const rng = new Rng(51 + C);
        const x = randn(rng, N * C, 3).map((v) => v + 2);
        const w = withWeight ? randn(rng, C) : null;
        const y = toBackend(backend, new Float64Array(N * C + 3).fill(7));
        const rstd = backend.alloc(N);
        backend.rmsnormForward(y, rstd, toBackend(backend, x), w && toBackend(backend, w), N, C, 1e-6);
        const expected = naiveRmsnorm(x, w, N, C, 1e-6);
        expectClose(y, expected.y, tol, `y ${N}×${C}`);
        expectClose(rstd, expected.rstd, tol, `rstd ${N}×${C}`);
        expect(Array.from(y.subarray(N * C))).toEqual([7, 7, 7]); // only the prefix is written
      }
    },
  );

  it('a zero row gives zeros (not NaN) thanks to eps', () => {
    const y = toBackend(backend, [1, 1, 1]);
    const rstd = backend.alloc(1);
    backend.rmsnormForward(y, rstd, backend.alloc(3), toBackend(backend, [2, 2, 2]), 1, 3, 1e-5);
    expect(Array.from(y)).toEqual([0, 0, 0]);
    expectClose(rstd, [1 / Math.sqrt(1e-5)], tol);
  });

  it.each([true, false])('backward matches finite differences for x and w, and accumulates (weight: %s)', (withW) => {
    const rng = new Rng(52);
    const [N, C, eps] = [4, 6, 1e-5];
    const x = randn(rng, N * C, 2);
    const w = withW ? randn(rng, C) : null;
    const r = randn(rng, N * C);
    const rstd = backend.alloc(N);
    const bx = toBackend(backend, x);
    const bw = w && toBackend(backend, w);
    backend.rmsnormForward(backend.alloc(N * C), rstd, bx, bw, N, C, eps);
    const dx = backend.alloc(N * C);
    const dw = withW ? backend.alloc(C) : null;
    backend.rmsnormBackward(dx, dw, toBackend(backend, r), bx, rstd, bw, N, C);
    const ref = oracle();
    const y64 = new Float64Array(N * C);
    const r64 = new Float64Array(N);
    const f = (): number => {
      ref.rmsnormForward(y64, r64, x, w, N, C, eps);
      return weightedSum(y64, r);
    };
    expectGradOk(gradCheck(f, x, dx, grad));
    if (w !== null && dw !== null) expectGradOk(gradCheck(f, w, dw, grad));

    const once = [Array.from(dx), dw === null ? [] : Array.from(dw)] as const;
    backend.rmsnormBackward(dx, dw, toBackend(backend, r), bx, rstd, bw, N, C);
    expectClose(
      dx,
      once[0].map((v) => 2 * v),
      tol,
      'dx twice',
    );
    if (dw !== null)
      expectClose(
        dw,
        once[1].map((v) => 2 * v),
        tol,
        'dw twice',
      );
  });

  it('with a weight but dw null, dx is the same and nothing else is written', () => {
    const rng = new Rng(53);
    const [N, C] = [3, 9];
    const x = toBackend(backend, randn(rng, N * C));
    const w = toBackend(backend, randn(rng, C));
    const dy = toBackend(backend, randn(rng, N * C));
    const rstd = backend.alloc(N);
    backend.rmsnormForward(backend.alloc(N * C), rstd, x, w, N, C, 1e-5);
    const dxA = backend.alloc(N * C);
    const dxB = backend.alloc(N * C);
    backend.rmsnormBackward(dxA, backend.alloc(C), dy, x, rstd, w, N, C);
    backend.rmsnormBackward(dxB, null, dy, x, rstd, w, N, C);
    expect(Array.from(dxB)).toEqual(Array.from(dxA));
  });

  it('dx is orthogonal to x per row when w is null (the scale of x does not change y)', () => {
    const rng = new Rng(54);
    const [N, C] = [3, 8];
    const xs = randn(rng, N * C);
    const x = toBackend(backend, xs);
    const rstd = backend.alloc(N);
    backend.rmsnormForward(backend.alloc(N * C), rstd, x, null, N, C, 0);
    const dx = backend.alloc(N * C);
    backend.rmsnormBackward(dx, null, toBackend(backend, randn(rng, N * C)), x, rstd, null, N, C);
    for (let n = 0; n < N; n++) {
      let dot = 0;
      for (let c = 0; c < C; c++) dot += (dx[n * C + c] as number) * (xs[n * C + c] as number);
      expect(Math.abs(dot)).toBeLessThan(1e-4);
    }
  });
});
