import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

/** op(A)[i,k] for A stored [M,K] (or [K,M] when transposed). */
function opA(a: ArrayLike<number>, i: number, k: number, M: number, K: number, transA: boolean): number {
  return (transA ? a[k * M + i] : a[i * K + k]) as number;
}

/** op(B)[k,j] for B stored [K,N] (or [N,K] when transposed). */
function opB(b: ArrayLike<number>, k: number, j: number, N: number, K: number, transB: boolean): number {
  return (transB ? b[j * K + k] : b[k * N + j]) as number;
}

/** The obviously correct triple loop, in float64. */
function naiveMatmul(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  M: number,
  N: number,
  K: number,
  transA: boolean,
  transB: boolean,
): Float64Array {
  const c = new Float64Array(M * N);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += opA(a, i, k, M, K, transA) * opB(b, k, j, N, K, transB);
      c[i * N + j] = s;
    }
  }
  return c;
}

const VARIANTS = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
] as const;

// Odd and even sizes so the 2×2 / 2×4 register blocks and their edges are all exercised.
const SHAPES = [
  [1, 1, 1],
  [2, 3, 4],
  [5, 7, 3],
  [6, 4, 9],
  [17, 13, 11],
] as const;

describe.each(backendCases())('matmul ($label)', ({ backend, tol, grad }) => {
  it('computes a hand-checkable 2×2 product in every transpose variant', () => {
    // A = [[1,2],[3,4]], B = [[5,6],[7,8]]: AB = [[19,22],[43,50]], ABᵀ = [[17,23],[39,53]],
    // AᵀB = [[26,30],[38,44]], AᵀBᵀ = [[23,31],[34,46]].
    const a = toBackend(backend, [1, 2, 3, 4]);
    const b = toBackend(backend, [5, 6, 7, 8]);
    const c = backend.alloc(4);
    const expected: Record<string, number[]> = {
      'false,false': [19, 22, 43, 50],
      'false,true': [17, 23, 39, 53],
      'true,false': [26, 30, 38, 44],
      'true,true': [23, 31, 34, 46],
    };
    for (const [tA, tB] of VARIANTS) {
      backend.matmul(c, a, b, 2, 2, 2, tA, tB, false);
      expect(Array.from(c), `transA=${tA} transB=${tB}`).toEqual(expected[`${tA},${tB}`]);
    }
  });

  it.each(VARIANTS)('matches the naive triple loop on random inputs (transA=%s, transB=%s)', (tA, tB) => {
    const rng = new Rng(21);
    for (const [M, N, K] of SHAPES) {
      const a = randn(rng, M * K);
      const b = randn(rng, K * N);
      const c = backend.alloc(M * N);
      backend.fill(c, M * N, 123); // stale contents must be overwritten
      backend.matmul(c, toBackend(backend, a), toBackend(backend, b), M, N, K, tA, tB, false);
      expectClose(
        c,
        naiveMatmul(a, b, M, N, K, tA, tB),
        { rtol: tol.rtol * 10, atol: tol.atol * 10 },
        `C ${M}x${N}x${K}`,
      );
    }
  });

  it.each(VARIANTS)('accumulate adds to C instead of overwriting it (transA=%s, transB=%s)', (tA, tB) => {
    const rng = new Rng(22);
    const [M, N, K] = [5, 6, 7];
    const a = randn(rng, M * K);
    const b = randn(rng, K * N);
    const c0 = randn(rng, M * N);
    const c = toBackend(backend, c0);
    backend.matmul(c, toBackend(backend, a), toBackend(backend, b), M, N, K, tA, tB, true);
    const prod = naiveMatmul(a, b, M, N, K, tA, tB);
    expectClose(
      c,
      prod.map((v, i) => v + (c0[i] as number)),
      { rtol: tol.rtol * 10, atol: tol.atol * 10 },
    );
  });

  it('writes only the [M,N] prefix of C', () => {
    const c = toBackend(backend, [0, 0, 0, 0, 7, 7]);
    backend.matmul(c, toBackend(backend, [1, 2]), toBackend(backend, [3, 4]), 2, 2, 1, false, false, false);
    expect(Array.from(c)).toEqual([3, 4, 6, 8, 7, 7]);
  });

  it('the linear-layer backward (dx = dy·W, dW += dyᵀ·x) matches finite differences', () => {
    // y[N,O] = x[N,I] · W[O,I]ᵀ + b; objective Σ y ⊙ r.
    const rng = new Rng(23);
    const [N, I, O] = [5, 4, 3];
    const x = randn(rng, N * I);
    const w = randn(rng, O * I);
    const bias = randn(rng, O);
    const r = randn(rng, N * O);
    const dx = backend.alloc(N * I);
    const dw = backend.alloc(O * I);
    const db = backend.alloc(O);
    const dy = toBackend(backend, r);
    backend.matmul(dx, dy, toBackend(backend, w), N, I, O, false, false, true);
    backend.matmul(dw, dy, toBackend(backend, x), O, I, N, true, false, true);
    backend.biasBackward(db, dy, N, O);

    const ref = oracle();
    const y = new Float64Array(N * O);
    const f = (): number => {
      ref.matmul(y, x, w, N, O, I, false, true, false);
      ref.addBias(y, bias, N, O);
      return weightedSum(y, r);
    };
    expectGradOk(gradCheck(f, x, dx, grad));
    expectGradOk(gradCheck(f, w, dw, grad));
    expectGradOk(gradCheck(f, bias, db, grad));
  });
});

describe.each(backendCases())('bias kernels ($label)', ({ backend }) => {
  it('addBias adds bias[c] to every row, only within rows × cols', () => {
    const y = toBackend(backend, [1, 2, 3, 4, 5, 6, 100]);
    backend.addBias(y, toBackend(backend, [10, 20, 30]), 2, 3);
    expect(Array.from(y)).toEqual([11, 22, 33, 14, 25, 36, 100]);
  });

  it('biasBackward sums columns and accumulates (twice doubles)', () => {
    const dy = toBackend(backend, [1, 2, 3, 4, 5, 6]);
    const db = toBackend(backend, [0.5, 0, 0]);
    backend.biasBackward(db, dy, 2, 3);
    expect(Array.from(db)).toEqual([5.5, 7, 9]);
    backend.biasBackward(db, dy, 2, 3);
    expect(Array.from(db)).toEqual([10.5, 14, 18]);
  });
});
