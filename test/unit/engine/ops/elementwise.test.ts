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
