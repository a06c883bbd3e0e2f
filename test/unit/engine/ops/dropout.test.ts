import { describe, expect, it } from 'vitest';
import { drawKeepMask } from '../../../../src/engine/backend';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

describe.each(backendCases())('dropout ($label)', ({ backend, tol, grad }) => {
  it('p = 0 is the identity (forward) and passes gradients through (backward), whatever keep holds', () => {
    const rng = new Rng(51);
    const x = randn(rng, 20);
    const keep = new Uint8Array(20); // all zeros: must not matter when p = 0
    const y = backend.alloc(20);
    backend.dropoutForward(y, toBackend(backend, x), keep, 20, 0);
    expectClose(y, x, { rtol: 0, atol: 0 });
    const dy = randn(rng, 20);
    const dx = toBackend(backend, [...Array<number>(20).fill(1)]);
    backend.dropoutBackward(dx, toBackend(backend, dy), keep, 20, 0);
    expectClose(dx, dy.map((v) => v + 1), tol);
  });

  it('with a seeded mask, keeps exactly the kept units scaled by 1/(1−p) and zeroes the rest', () => {
    const rng = new Rng(52);
    const n = 200;
    const p = 0.3;
    const keep = new Uint8Array(n);
    drawKeepMask(keep, n, p, new Rng(7));
    const kept = keep.reduce((s, k) => s + k, 0);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(n);
    const x = randn(rng, n);
    const y = backend.alloc(n);
    backend.dropoutForward(y, toBackend(backend, x), keep, n, p);
    expectClose(y, x.map((v, i) => (keep[i] === 1 ? v / (1 - p) : 0)), tol);
    for (let i = 0; i < n; i++) if (keep[i] === 0) expect(y[i]).toBe(0);
  });

  it('backward matches finite differences and accumulates (twice doubles)', () => {
    const rng = new Rng(53);
    const [n, p] = [30, 0.25];
    const keep = new Uint8Array(n);
    drawKeepMask(keep, n, p, new Rng(8));
    const x = randn(rng, n);
    const r = randn(rng, n);
    const dx = backend.alloc(n);
    backend.dropoutBackward(dx, toBackend(backend, r), keep, n, p);
    const ref = oracle();
    const y = new Float64Array(n);
    const f = (): number => {
      ref.dropoutForward(y, x, keep, n, p);
      return weightedSum(y, r);
    };
    expectGradOk(gradCheck(f, x, dx, grad));
    const once = Array.from(dx);
    backend.dropoutBackward(dx, toBackend(backend, r), keep, n, p);
    expectClose(dx, once.map((v) => 2 * v), tol);
  });

  it('p = 1 drops everything without producing NaN', () => {
    const y = backend.alloc(4);
    backend.dropoutForward(y, toBackend(backend, [1, 2, 3, 4]), new Uint8Array(4), 4, 1);
    expect(Array.from(y)).toEqual([0, 0, 0, 0]);
  });
});
