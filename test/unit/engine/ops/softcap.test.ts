import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

describe.each(backendCases())('softcap ($label)', ({ backend, tol, grad }) => {
  it('y = cap · tanh(x / cap): hand values, saturation at ±cap, and in place', () => {
    const x = toBackend(backend, [2, -2, 0, 1e-3, 1e4, -1e4]);
    const y = backend.alloc(6);
    backend.softcapForward(y, x, 6, 2);
    // 2 · tanh(1) = 1.5231883119115297; tiny inputs pass through (x ≈ y).
    expectClose(y, [1.5231883119115297, -1.5231883119115297, 0, 2 * Math.tanh(5e-4), 2, -2], tol);
    backend.softcapForward(x, x, 6, 2);
    expectClose(x, Array.from(y), tol);
  });

  it('forward matches the formula on random values, various lengths and caps', () => {
    for (const [n, cap] of [
      [37, 30],
      [203, 15],
      [3, 0.5],
    ] as const) {
      const rng = new Rng(70 + n);
      const x = randn(rng, n, cap);
      const y = toBackend(backend, new Float64Array(n + 2).fill(5));
      backend.softcapForward(y, toBackend(backend, x), n, cap);
      expectClose(
        y,
        x.map((v) => cap * Math.tanh(v / cap)),
        tol,
        `n ${n}`,
      );
      expect(Array.from(y.subarray(n))).toEqual([5, 5]);
    }
  });

  it('backward scales the gradient in place by 1 − (y/cap)² and matches finite differences', () => {
    const rng = new Rng(71);
    const [n, cap] = [41, 3];
    const x = randn(rng, n, 4);
    const r = randn(rng, n);
    const y = backend.alloc(n);
    backend.softcapForward(y, toBackend(backend, x), n, cap);
    const d = toBackend(backend, r);
    backend.softcapBackward(d, y, n, cap);
    expectClose(
      d,
      r.map((v, i) => v * (1 - Math.tanh((x[i] as number) / cap) ** 2)),
      tol,
    );
    const ref = oracle();
    const y64 = new Float64Array(n);
    const f = (): number => {
      ref.softcapForward(y64, x, n, cap);
      return weightedSum(y64, r);
    };
    expectGradOk(gradCheck(f, x, d, grad));
  });
});
