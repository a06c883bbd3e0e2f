import { describe, expect, it } from 'vitest';
import { gradCheck } from './gradcheck';

/** f(x) = Σ w_i sin(x_i), whose gradient is w_i cos(x_i). */
function sinProblem(n: number): { x: Float64Array; w: Float64Array; f: () => number; grad: Float64Array } {
  const x = Float64Array.from({ length: n }, (_, i) => 0.3 * i - 1);
  const w = Float64Array.from({ length: n }, (_, i) => 1 + 0.1 * i);
  const f = (): number => x.reduce((s, xi, i) => s + (w[i] as number) * Math.sin(xi), 0);
  const grad = x.map((xi, i) => (w[i] as number) * Math.cos(xi));
  return { x, w, f, grad };
}

describe('gradCheck', () => {
  it('passes a correct gradient and checks every element by default', () => {
    const { x, f, grad } = sinProblem(9);
    const r = gradCheck(f, x, grad);
    expect(r.ok, r.message).toBe(true);
    expect(r.checked).toBe(9);
    expect(r.worstRatio).toBeLessThan(1);
  });

  it('fails a gradient that is wrong in one element, and reports that element', () => {
    const { x, f, grad } = sinProblem(9);
    grad[6] = (grad[6] as number) * 1.01;
    const r = gradCheck(f, x, grad);
    expect(r.ok).toBe(false);
    expect(r.worstIndex).toBe(6);
    expect(r.analytic).toBe(grad[6]);
    expect(Math.abs(r.numeric - (grad[6] as number) / 1.01)).toBeLessThan(1e-8);
    expect(r.message).toMatch(/FAILED .* index 6/);
  });

  it('treats a NaN gradient as a failure', () => {
    const { x, f, grad } = sinProblem(4);
    grad[2] = NaN;
    const r = gradCheck(f, x, grad);
    expect(r.ok).toBe(false);
    expect(r.worstIndex).toBe(2);
  });

  it('restores x exactly after probing', () => {
    const { x, f, grad } = sinProblem(5);
    const before = Array.from(x);
    gradCheck(f, x, grad);
    expect(Array.from(x)).toEqual(before);
  });

  it('samples maxChecks evenly spaced elements including both ends, or exactly the given indices', () => {
    const { x, f, grad } = sinProblem(101);
    grad[100] = 0; // wrong only in the last element
    const sampled = gradCheck(f, x, grad, { maxChecks: 5 });
    expect(sampled.checked).toBe(5);
    expect(sampled.ok).toBe(false);
    expect(sampled.worstIndex).toBe(100);
    const chosen = gradCheck(f, x, grad, { indices: [3, 50] });
    expect(chosen.checked).toBe(2);
    expect(chosen.ok, chosen.message).toBe(true);
  });

  it('works on a Float32Array input with a larger step, using the step actually stored', () => {
    const x = Float32Array.from([0.1, -0.7, 1.3]);
    const f = (): number => x.reduce((s, xi) => s + xi * xi * xi, 0);
    const grad = Float64Array.from(x, (xi) => 3 * xi * xi);
    const r = gradCheck(f, x, grad, { eps: 1e-3, rtol: 1e-3, atol: 1e-5 });
    expect(r.ok, r.message).toBe(true);
  });
});
