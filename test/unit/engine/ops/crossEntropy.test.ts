import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectAllFinite, expectClose, expectGradOk, oracle, randn, toBackend } from './opTestUtils';

/**
 * −Σ_v q_v · log softmax(z)_v with q = (1 − ε)·onehot(t) + ε/V, straight from the
 * definition of cross-entropy against a smoothed target distribution (log-softmax via
 * the row max for safety). Returns the per-row losses; ignored rows are NaN.
 */
function naiveLosses(
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  N: number,
  V: number,
  ignore: number,
  eps: number,
): number[] {
  const out: number[] = [];
  for (let n = 0; n < N; n++) {
    const row = Array.from({ length: V }, (_, v) => logits[n * V + v] as number);
    if (targets[n] === ignore) {
      out.push(NaN);
      continue;
    }
    const m = Math.max(...row);
    const logZ = m + Math.log(row.reduce((s, z) => s + Math.exp(z - m), 0));
    let loss = 0;
    for (let v = 0; v < V; v++) {
      const q = (v === targets[n] ? 1 - eps : 0) + eps / V;
      loss -= q * ((row[v] as number) - logZ);
    }
    out.push(loss);
  }
  return out;
}

describe.each(backendCases())('cross-entropy ($label)', ({ backend, tol, grad }) => {
  it('gives ln 2 for two equal logits, and lse = ln 2', () => {
    const lse = backend.alloc(1);
    const { sum, count } = backend.crossEntropyForward(
      lse,
      toBackend(backend, [0, 0]),
      Int32Array.from([1]),
      1,
      2,
      -1,
      0,
    );
    expect(count).toBe(1);
    expect(sum).toBeCloseTo(Math.LN2, 6);
    expect(lse[0]).toBeCloseTo(Math.LN2, 6);
  });

  it('label smoothing matches (1−ε)(lse − z_t) + ε(lse − mean z), as PyTorch computes it', () => {
    // logits [1, 2, 3], target 0, ε = 0.1.
    const lseRef = Math.log(Math.E + Math.E ** 2 + Math.E ** 3);
    const formula = 0.9 * (lseRef - 1) + 0.1 * (lseRef - 2);
    const lse = backend.alloc(1);
    const { sum } = backend.crossEntropyForward(
      lse,
      toBackend(backend, [1, 2, 3]),
      Int32Array.from([0]),
      1,
      3,
      -1,
      0.1,
    );
    expect(sum).toBeCloseTo(formula, 5);
    expect(sum).toBeCloseTo(naiveLosses([1, 2, 3], [0], 1, 3, -1, 0.1)[0] as number, 5);
  });

  it.each([0, 0.1, 0.3])('matches −Σ q log softmax on random rows, skipping ignored rows (ε = %s)', (eps) => {
    const rng = new Rng(81);
    const [N, V, ignore] = [7, 11, 3];
    const logits = randn(rng, N * V, 2);
    const targets = Int32Array.from([0, 3, 10, 5, 3, 7, 1]); // rows 1 and 4 ignored
    const lse = backend.alloc(N);
    const { sum, count } = backend.crossEntropyForward(lse, toBackend(backend, logits), targets, N, V, ignore, eps);
    const losses = naiveLosses(logits, targets, N, V, ignore, eps);
    expect(count).toBe(5);
    const expected = losses.filter((l) => !Number.isNaN(l)).reduce((s, l) => s + l, 0);
    expect(Math.abs(sum - expected)).toBeLessThan(1e-5 * Math.abs(expected));
  });

  it('ignored rows contribute nothing: changing their logits changes neither loss nor gradients', () => {
    const rng = new Rng(82);
    const [N, V] = [3, 4];
    const logits = randn(rng, N * V);
    const targets = Int32Array.from([2, -100, 1]);
    const run = (ls: ArrayLike<number>): { sum: number; count: number; d: number[] } => {
      const bl = toBackend(backend, ls);
      const lse = backend.alloc(N);
      const res = backend.crossEntropyForward(lse, bl, targets, N, V, -100, 0.1);
      const d = backend.alloc(N * V);
      backend.crossEntropyBackward(d, bl, lse, targets, N, V, -100, 0.1, 1);
      return { ...res, d: Array.from(d) };
    };
    const a = run(logits);
    const changed = Float64Array.from(logits);
    for (let v = 0; v < V; v++) changed[V + v] = 50 * (v + 1);
    const b = run(changed);
    expect(a.count).toBe(2);
    expect(b.sum).toBe(a.sum);
    expect(b.d).toEqual(a.d);
    expect(a.d.slice(V, 2 * V)).toEqual([0, 0, 0, 0]);
  });

  it('stays finite for large logits (1e4)', () => {
    const lse = backend.alloc(2);
    const logits = toBackend(backend, [1e4, 0, -1e4, -1e4, 1e4, 1e4]);
    const targets = Int32Array.from([1, 0]);
    const { sum } = backend.crossEntropyForward(lse, logits, targets, 2, 3, -1, 0.1);
    expect(Number.isFinite(sum)).toBe(true);
    expectAllFinite(lse);
    const expected = naiveLosses([1e4, 0, -1e4, -1e4, 1e4, 1e4], [1, 0], 2, 3, -1, 0.1) as [number, number];
    expect(Math.abs(sum - (expected[0] + expected[1]))).toBeLessThan(1e-3 * Math.abs(sum));
    const d = backend.alloc(6);
    backend.crossEntropyBackward(d, logits, lse, targets, 2, 3, -1, 0.1, 1);
    expectAllFinite(d);
  });

  it('rejects a target outside the vocabulary with an EngineError', () => {
    const lse = backend.alloc(1);
    let caught: unknown;
    try {
      backend.crossEntropyForward(lse, toBackend(backend, [0, 0, 0]), Int32Array.from([3]), 1, 3, -1, 0);
    } catch (e) {
      caught = e;
    }
    expect(EngineError.is(caught, 'input/invalid')).toBe(true);
    expect((caught as Error).message).toContain('Target id 3');
  });

  it.each([0, 0.1])('backward matches finite differences of the mean loss and accumulates (ε = %s)', (eps) => {
    const rng = new Rng(83);
    const [N, V, ignore] = [5, 6, 0];
    const logits = randn(rng, N * V, 1.5);
    const targets = Int32Array.from([3, 0, 5, 1, 2]); // row 1 ignored
    const bl = toBackend(backend, logits);
    const lse = backend.alloc(N);
    const { count } = backend.crossEntropyForward(lse, bl, targets, N, V, ignore, eps);
    const d = backend.alloc(N * V);
    backend.crossEntropyBackward(d, bl, lse, targets, N, V, ignore, eps, 1 / count);
    const ref = oracle();
    const lse64 = new Float64Array(N);
    const f = (): number => {
      const r = ref.crossEntropyForward(lse64, logits, targets, N, V, ignore, eps);
      return r.sum / r.count;
    };
    expectGradOk(gradCheck(f, logits, d, grad));
    const once = Array.from(d);
    backend.crossEntropyBackward(d, bl, lse, targets, N, V, ignore, eps, 1 / count);
    expectClose(
      d,
      once.map((v) => 2 * v),
      tol,
    );
  });

  it('backward is softmax − q: each counted row of the gradient sums to 0', () => {
    const rng = new Rng(84);
    const [N, V] = [3, 5];
    const bl = toBackend(backend, randn(rng, N * V));
    const targets = Int32Array.from([4, 0, 2]);
    const lse = backend.alloc(N);
    backend.crossEntropyForward(lse, bl, targets, N, V, -1, 0.1);
    const d = backend.alloc(N * V);
    backend.crossEntropyBackward(d, bl, lse, targets, N, V, -1, 0.1, 1);
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let v = 0; v < V; v++) s += d[n * V + v] as number;
      expect(Math.abs(s)).toBeLessThan(1e-5);
    }
  });
});
