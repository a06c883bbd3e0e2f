import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { backendCases, expectClose, randn, toBackend } from './opTestUtils';

describe.each(backendCases())('elementwise kernels ($label)', ({ backend, tol }) => {
  it('fill writes the value to the prefix only', () => {
    const x = toBackend(backend, [1, 2, 3, 4, 5]);
    backend.fill(x, 3, -2.5);
    expect(Array.from(x)).toEqual([-2.5, -2.5, -2.5, 4, 5]);
  });

  it('scale multiplies the prefix only', () => {
    const x = toBackend(backend, [1, -2, 3, 4]);
    backend.scale(x, 3, 0.5);
    expect(Array.from(x)).toEqual([0.5, -1, 1.5, 4]);
  });

  it('add matches element-wise sums, also in place (out aliasing a or b)', () => {
    const rng = new Rng(11);
    const a = randn(rng, 37);
    const b = randn(rng, 37);
    const expected = a.map((v, i) => v + (b[i] as number));
    const out = backend.alloc(37);
    backend.add(out, toBackend(backend, a), toBackend(backend, b), 37);
    expectClose(out, expected, tol);

    const aliasA = toBackend(backend, a);
    backend.add(aliasA, aliasA, toBackend(backend, b), 37);
    expectClose(aliasA, expected, tol);
    const aliasB = toBackend(backend, b);
    backend.add(aliasB, toBackend(backend, a), aliasB, 37);
    expectClose(aliasB, expected, tol);
  });

  it('mul: a ⊙ b on the prefix, in place on a or b, and accumulating into a third buffer', () => {
    for (const n of [1, 6, 37, 203]) {
      const rng = new Rng(12 + n);
      const a = randn(rng, n);
      const b = randn(rng, n);
      const c = randn(rng, n);
      const product = a.map((v, i) => v * (b[i] as number));
      const out = toBackend(backend, new Float64Array(n + 1).fill(4));
      backend.mul(out, toBackend(backend, a), toBackend(backend, b), n, false);
      expectClose(out, product, tol, `mul ${n}`);
      expect(out[n]).toBe(4);
      const aliasA = toBackend(backend, a);
      backend.mul(aliasA, aliasA, toBackend(backend, b), n, false);
      expectClose(aliasA, product, tol, `out = a, ${n}`);
      const aliasB = toBackend(backend, b);
      backend.mul(aliasB, toBackend(backend, a), aliasB, n, false);
      expectClose(aliasB, product, tol, `out = b, ${n}`);
      const square = toBackend(backend, a);
      backend.mul(square, square, square, n, false);
      expectClose(
        square,
        a.map((v) => v * v),
        tol,
        `out = a = b, ${n}`,
      );
      const acc = toBackend(backend, c);
      backend.mul(acc, toBackend(backend, a), toBackend(backend, b), n, true);
      expectClose(
        acc,
        product.map((v, i) => v + (c[i] as number)),
        tol,
        `accumulate ${n}`,
      );
    }
    const hand = toBackend(backend, [1, 1, 1]);
    backend.mul(hand, toBackend(backend, [2, -3, 4]), toBackend(backend, [0.5, 2, 0]), 3, true);
    expect(Array.from(hand)).toEqual([2, -5, 1]);
  });

  it('add leaves elements past n untouched', () => {
    const out = toBackend(backend, [9, 9, 9]);
    backend.add(out, toBackend(backend, [1, 1, 1]), toBackend(backend, [2, 2, 2]), 2);
    expect(Array.from(out)).toEqual([3, 3, 9]);
  });

  it('sumSquares matches Σx² and counts only the prefix', () => {
    const rng = new Rng(12);
    const x = randn(rng, 101);
    let expected = 0;
    for (let i = 0; i < 100; i++) expected += (x[i] as number) ** 2;
    const got = backend.sumSquares(toBackend(backend, x), 100);
    expect(Math.abs(got - expected)).toBeLessThanOrEqual(1e-12 * expected);
  });

  it('sumSquares accumulates in float64 (small terms next to a large one survive)', () => {
    // 1e4² = 1e8, whose float32 spacing is 8: a float32 running sum would drop every +1.
    const x = backend.alloc(1001);
    x[0] = 1e4;
    for (let i = 1; i < 1001; i++) x[i] = 1;
    expect(backend.sumSquares(x, 1001)).toBe(1e8 + 1000);
  });
});
