import { describe, expect, it } from 'vitest';
import type { AdamParams } from '../../../../src/engine/backend';
import { Rng } from '../../../../src/engine/rng';
import { backendCases, expectClose, randn, toBackend } from './opTestUtils';

/**
 * Kingma & Ba Algorithm 1, one scalar at a time, written out longhand, with AdamW's
 * decoupled decay (Loshchilov & Hutter) applied to θ first when `decay` is set.
 */
function handAdam(theta: number[], grads: number[][], o: Omit<AdamParams, 'step'>, decay: boolean[]): number[] {
  const m = theta.map(() => 0);
  const v = theta.map(() => 0);
  const th = [...theta];
  grads.forEach((g, s) => {
    const t = s + 1;
    for (let i = 0; i < th.length; i++) {
      if (decay[i]) th[i] = (th[i] as number) * (1 - o.lr * o.weightDecay);
      const gi = g[i] as number;
      m[i] = o.beta1 * (m[i] as number) + (1 - o.beta1) * gi;
      v[i] = o.beta2 * (v[i] as number) + (1 - o.beta2) * gi * gi;
      const mHat = (m[i] as number) / (1 - o.beta1 ** t);
      const vHat = (v[i] as number) / (1 - o.beta2 ** t);
      th[i] = (th[i] as number) - (o.lr * mHat) / (Math.sqrt(vHat) + o.eps);
    }
  });
  return th;
}

describe.each(backendCases())('adamStep ($label)', ({ backend, tol }) => {
  const run = (
    theta: Float64Array,
    grads: Float64Array[],
    o: Omit<AdamParams, 'step'>,
    mask: Uint8Array | null,
  ): ArrayLike<number> => {
    const n = theta.length;
    const p = toBackend(backend, theta);
    const m = backend.alloc(n);
    const v = backend.alloc(n);
    grads.forEach((g, s) => backend.adamStep(p, toBackend(backend, g), m, v, n, { ...o, step: s + 1 }, mask));
    return p;
  };

  it('first step moves each parameter by about lr against the gradient sign (bias correction)', () => {
    const o = { lr: 0.01, beta1: 0.9, beta2: 0.98, eps: 1e-9, weightDecay: 0 };
    const p = run(Float64Array.from([1, 1, 1]), [Float64Array.from([0.5, -2, 1e-3])], o, null);
    expectClose(p, [0.99, 1.01, 0.99], { rtol: 1e-5, atol: 1e-6 });
  });

  it('matches a hand-written loop of the Kingma–Ba formulas over several steps (plain Adam)', () => {
    const rng = new Rng(91);
    const n = 12;
    const theta = randn(rng, n);
    const grads = Array.from({ length: 5 }, () => randn(rng, n));
    const o = { lr: 3e-3, beta1: 0.9, beta2: 0.98, eps: 1e-9, weightDecay: 0 };
    const expected = handAdam(
      Array.from(theta),
      grads.map((g) => Array.from(g)),
      o,
      Array<boolean>(n).fill(false),
    );
    expectClose(run(theta, grads, o, null), expected, tol);
  });

  it('AdamW decays only where decayMask = 1, and a null mask decays nothing', () => {
    const rng = new Rng(92);
    const n = 10;
    const theta = randn(rng, n);
    const grads = Array.from({ length: 4 }, () => randn(rng, n));
    const o = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 };
    const mask = Uint8Array.from([1, 0, 1, 1, 0, 0, 1, 0, 1, 0]);
    const decay = Array.from(mask, (b) => b === 1);
    const g = grads.map((x) => Array.from(x));
    expectClose(run(theta, grads, o, mask), handAdam(Array.from(theta), g, o, decay), tol, 'masked');
    expectClose(
      run(theta, grads, o, null),
      handAdam(Array.from(theta), g, o, Array<boolean>(n).fill(false)),
      tol,
      'null mask',
    );
    // The decay must actually matter at this scale, or the test above could not fail.
    const withAll = handAdam(Array.from(theta), g, o, Array<boolean>(n).fill(true));
    const without = handAdam(Array.from(theta), g, o, Array<boolean>(n).fill(false));
    expect(Math.abs((withAll[0] as number) - (without[0] as number))).toBeGreaterThan(1e-4);
  });

  it('updates only params[0..n) and stores the moments', () => {
    const p = toBackend(backend, [1, 2, 3]);
    const m = backend.alloc(3);
    const v = backend.alloc(3);
    backend.adamStep(
      p,
      toBackend(backend, [1, 1, 1]),
      m,
      v,
      2,
      { lr: 0.1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, step: 1 },
      null,
    );
    expect(p[2]).toBe(3);
    expectClose(m, [0.1, 0.1, 0], tol);
    expectClose(v, [0.01, 0.01, 0], tol);
  });
});
