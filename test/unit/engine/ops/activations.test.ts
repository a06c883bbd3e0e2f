import { describe, expect, it } from 'vitest';
import { erf, normalCdf } from '../../../../src/engine/ops/activations';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

/**
 * erf by its Maclaurin series 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1)), summed until the terms
 * vanish: slow but obviously correct; for |x| ≤ 3 cancellation costs < 1e-13.
 */
function seriesErf(x: number): number {
  let term = x; // x^(2n+1) (−1)ⁿ / n!
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= (-x * x) / n;
    const add = term / (2 * n + 1);
    sum += add;
    if (Math.abs(add) < 1e-18) break;
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

describe('erf and Φ (Cody 1969 rational approximations)', () => {
  it('match the Maclaurin series to 1e-12 on a dense grid over [−3, 3]', () => {
    let worst = 0;
    for (let x = -3; x <= 3; x += 0.0137) worst = Math.max(worst, Math.abs(erf(x) - seriesErf(x)));
    expect(worst).toBeLessThan(1e-12);
  });

  it('match tabulated values, including the tails', () => {
    expect(erf(0)).toBe(0);
    expect(erf(0.5)).toBeCloseTo(0.5204998778130465, 14);
    expect(erf(1)).toBeCloseTo(0.8427007929497149, 14);
    expect(erf(2)).toBeCloseTo(0.9953222650189527, 14);
    expect(erf(-2)).toBeCloseTo(-0.9953222650189527, 14);
    expect(erf(3.5)).toBeCloseTo(0.9999992569016276, 14);
    expect(erf(5)).toBeCloseTo(0.9999999999984626, 14);
    expect(erf(30)).toBe(1);
    expect(erf(-30)).toBe(-1);
  });

  it('Φ keeps relative accuracy deep in the left tail (computed from erfc, not 1 − erf)', () => {
    const table: ReadonlyArray<readonly [number, number]> = [
      [0, 0.5],
      [1, 0.8413447460685429],
      [-1, 0.15865525393145707],
      [-3, 0.0013498980316301035],
      [-5, 2.866515718791939e-7],
      [-10, 7.619853024160527e-24],
    ];
    for (const [x, phi] of table) expect(Math.abs(normalCdf(x) / phi - 1), `Φ(${x})`).toBeLessThan(1e-12);
  });
});

describe.each(backendCases())('activations ($label)', ({ backend, tol, grad }) => {
  it('relu forward clamps negatives; backward passes dy where x > 0 (0 at x = 0) and accumulates', () => {
    const x = toBackend(backend, [-2, -0.5, 0, 0.5, 3]);
    const y = backend.alloc(5);
    backend.reluForward(y, x, 5);
    expect(Array.from(y)).toEqual([0, 0, 0, 0.5, 3]);
    const dx = toBackend(backend, [1, 1, 1, 1, 1]);
    backend.reluBackward(dx, toBackend(backend, [10, 20, 30, 40, 50]), x, 5);
    expect(Array.from(dx)).toEqual([1, 1, 1, 41, 51]);
  });

  it('gelu is the exact erf form, not the tanh approximation', () => {
    const y = backend.alloc(3);
    backend.geluForward(y, toBackend(backend, [1, -1, 0]), 3);
    // GELU(1) = Φ(1) = 0.84134474…; the tanh form gives 0.84119199…, 1.5e-4 away.
    expect(Math.abs((y[0] as number) - 0.8413447460685429)).toBeLessThan(1e-6);
    expect(Math.abs((y[1] as number) + 0.15865525393145707)).toBeLessThan(1e-6);
    expect(y[2]).toBe(0);
  });

  it('gelu forward matches ½x(1 + erf(x/√2)) with the series erf, and stays finite for large |x|', () => {
    const rng = new Rng(61);
    const x = randn(rng, 200, 1.5).map((v) => Math.max(-4, Math.min(4, v)));
    const y = backend.alloc(200);
    backend.geluForward(y, toBackend(backend, x), 200);
    expectClose(
      y,
      x.map((v) => 0.5 * v * (1 + seriesErf(v / Math.SQRT2))),
      tol,
    );

    const big = toBackend(backend, [1e4, -1e4, 40, -40]);
    const yb = backend.alloc(4);
    backend.geluForward(yb, big, 4);
    expectClose(yb, [1e4, 0, 40, 0], tol);
  });

  it("geluTanh is GPT-2's gelu_new: ½x(1 + tanh(√(2/π)(x + 0.044715x³))), not the exact GELU", () => {
    const y = backend.alloc(3);
    backend.geluTanhForward(y, toBackend(backend, [1, -1, 0]), 3);
    // PyTorch: F.gelu(torch.tensor([1., -1.], dtype=torch.float64), approximate='tanh').
    expect(Math.abs((y[0] as number) - 0.8411919906082768)).toBeLessThan(1e-6);
    expect(Math.abs((y[1] as number) + 0.15880800939172324)).toBeLessThan(1e-6);
    expect(y[2]).toBe(0);
  });

  it('geluTanh forward matches the formula on random inputs, and its tails: x for x ≫ 0, 0 for x ≪ 0, NaN stays NaN', () => {
    const rng = new Rng(63);
    const x = randn(rng, 203, 3);
    const y = backend.alloc(203);
    backend.geluTanhForward(y, toBackend(backend, x), 203);
    const k = Math.sqrt(2 / Math.PI);
    expectClose(
      y,
      x.map((v) => 0.5 * v * (1 + Math.tanh(k * (v + 0.044715 * v ** 3)))),
      tol,
    );
    const big = toBackend(backend, [1e4, -1e4, 40, -40, 1e15, -1e15]);
    const yb = backend.alloc(6);
    backend.geluTanhForward(yb, big, 6);
    expectClose(yb, [1e4, 0, 40, 0, 1e15, 0], tol);
    const dxb = backend.alloc(6);
    backend.geluTanhBackward(dxb, toBackend(backend, [1, 1, 1, 1, 1, 1]), big, 6);
    expectClose(dxb, [1, 0, 1, 0, 1, 0], tol);
    const yn = backend.alloc(1);
    backend.geluTanhForward(yn, toBackend(backend, [NaN]), 1);
    expect(yn[0]).toBeNaN();
  });

  it('silu is x · σ(x): hand values, tails without overflow, and NaN stays NaN', () => {
    const y = backend.alloc(7);
    backend.siluForward(y, toBackend(backend, [1, -1, 0, 2, 1e4, -1e4, -100]), 7);
    // σ(1) = 0.7310585786300049, σ(2) = 0.8807970779778823.
    expectClose(
      y,
      [0.7310585786300049, -0.2689414213699951, 0, 1.7615941559557646, 1e4, 0, -100 / (1 + Math.exp(100))],
      tol,
    );
    const dx = backend.alloc(4);
    backend.siluBackward(dx, toBackend(backend, [1, 1, 1, 1]), toBackend(backend, [0, 1e4, -1e4, 1]), 4);
    // d/dx x·σ(x) = σ(x)(1 + x(1 − σ(x))): ½ at 0; at 1: 0.7310585786 · (1 + 0.2689414214) = 0.9276705118.
    expectClose(dx, [0.5, 1, 0, 0.9276705118714869], tol);
    const yn = backend.alloc(1);
    backend.siluForward(yn, toBackend(backend, [NaN]), 1);
    expect(yn[0]).toBeNaN();
  });

  it('silu and relu2 forward match their formulas on lengths that are not multiples of 4', () => {
    for (const n of [1, 3, 37, 203]) {
      const rng = new Rng(64 + n);
      const x = randn(rng, n, 4);
      const y = toBackend(backend, new Float64Array(n + 2).fill(9));
      backend.siluForward(y, toBackend(backend, x), n);
      expectClose(
        y,
        x.map((v) => v / (1 + Math.exp(-v))),
        tol,
        `silu ${n}`,
      );
      expect(Array.from(y.subarray(n))).toEqual([9, 9]);
      backend.relu2Forward(y, toBackend(backend, x), n);
      expectClose(
        y,
        x.map((v) => (v > 0 ? v * v : 0)),
        tol,
        `relu2 ${n}`,
      );
      expect(Array.from(y.subarray(n))).toEqual([9, 9]);
    }
  });

  it('relu2 is max(x, 0)²; its backward adds dy · 2x where x > 0', () => {
    const x = toBackend(backend, [-2, -0.5, 0, 0.5, 3]);
    const y = backend.alloc(5);
    backend.relu2Forward(y, x, 5);
    expect(Array.from(y)).toEqual([0, 0, 0, 0.25, 9]);
    const dx = toBackend(backend, [1, 1, 1, 1, 1]);
    backend.relu2Backward(dx, toBackend(backend, [10, 20, 30, 40, 50]), x, 5);
    expect(Array.from(dx)).toEqual([1, 1, 1, 41, 301]);
  });

  it.each(['relu', 'gelu', 'geluTanh', 'silu', 'relu2'] as const)(
    '%s backward matches finite differences and accumulates (twice doubles)',
    (act) => {
      const rng = new Rng(62);
      const n = 50;
      // Keep x away from relu's kink at 0, where the finite difference is meaningless.
      const x = randn(rng, n, 2).map((v) => (Math.abs(v) < 0.01 ? 0.5 : v));
      const r = randn(rng, n);
      const dx = backend.alloc(n);
      const back = (): void => {
        if (act === 'relu') backend.reluBackward(dx, toBackend(backend, r), toBackend(backend, x), n);
        else if (act === 'gelu') backend.geluBackward(dx, toBackend(backend, r), toBackend(backend, x), n);
        else if (act === 'silu') backend.siluBackward(dx, toBackend(backend, r), toBackend(backend, x), n);
        else if (act === 'relu2') backend.relu2Backward(dx, toBackend(backend, r), toBackend(backend, x), n);
        else backend.geluTanhBackward(dx, toBackend(backend, r), toBackend(backend, x), n);
      };
      back();
      const ref = oracle();
      const y = new Float64Array(n);
      const f = (): number => {
        if (act === 'relu') ref.reluForward(y, x, n);
        else if (act === 'gelu') ref.geluForward(y, x, n);
        else if (act === 'silu') ref.siluForward(y, x, n);
        else if (act === 'relu2') ref.relu2Forward(y, x, n);
        else ref.geluTanhForward(y, x, n);
        return weightedSum(y, r);
      };
      expectGradOk(gradCheck(f, x, dx, grad));
      const once = Array.from(dx);
      back();
      expectClose(
        dx,
        once.map((v) => 2 * v),
        tol,
      );
    },
  );
});
