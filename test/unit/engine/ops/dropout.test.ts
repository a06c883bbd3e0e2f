import { describe, expect, it } from 'vitest';
import { drawKeepMask, dropoutMask, keepThreshold } from '../../../../src/engine/ops/dropout';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

/** Ones in keep[0..n). */
function countKept(keep: Uint8Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += keep[i] as number;
  return s;
}

/** Pearson correlation of keep[i] and keep[i + lag] over i < n − lag. */
function lagCorrelation(keep: Uint8Array, n: number, lag: number): number {
  let sa = 0,
    sb = 0,
    sab = 0;
  const m = n - lag;
  for (let i = 0; i < m; i++) {
    const a = keep[i] as number,
      b = keep[i + lag] as number;
    sa += a;
    sb += b;
    sab += a * b;
  }
  const ma = sa / m,
    mb = sb / m;
  // For 0/1 values, the variance is mean · (1 − mean).
  return (sab / m - ma * mb) / Math.sqrt(ma * (1 - ma) * mb * (1 - mb));
}

describe('dropout keep threshold', () => {
  it('is ⌈p · 2³²⌉, clamped: p ≤ 0 keeps everything, p ≥ 1 nothing', () => {
    expect(keepThreshold(0)).toBe(0);
    expect(keepThreshold(-0.5)).toBe(0);
    expect(keepThreshold(0.5)).toBe(2 ** 31);
    expect(keepThreshold(0.1)).toBe(Math.ceil(0.1 * 2 ** 32));
    expect(keepThreshold(1)).toBe(2 ** 32);
    expect(keepThreshold(3)).toBe(2 ** 32);
  });
});

describe.each(backendCases())('dropout keep-mask ($label)', ({ backend }) => {
  const n = 200_000;
  /** A mask of n from `backend`, in its own memory when it has some. */
  const maskOf = (p: number, key0: number, key1: number, size = n): Uint8Array => {
    const keep = backend.allocBytes ? backend.allocBytes(size) : new Uint8Array(size);
    backend.dropoutMask(keep, size, p, key0, key1);
    return keep;
  };

  it("gives the reference kernel's bytes exactly", () => {
    for (const p of [0.1, 0.5]) {
      const want = new Uint8Array(n);
      dropoutMask(want, n, p, 0x2545f491, 0x9e3779b9);
      const got = maskOf(p, 0x2545f491, 0x9e3779b9);
      let firstDiff = -1;
      for (let i = 0; i < n && firstDiff < 0; i++) if (got[i] !== want[i]) firstDiff = i;
      expect(firstDiff, `first differing byte at ${firstDiff}`).toBe(-1);
    }
  });

  it.each([0.1, 0.5, 0.9])('keeps a fraction 1 − p within 5 binomial sigmas (p = %f)', (p) => {
    for (const [k0, k1] of [
      [0, 0],
      [1, 0],
      [0xdeadbeef, 0x01234567],
    ] as const) {
      const kept = countKept(maskOf(p, k0, k1), n);
      const sigma = Math.sqrt(n * p * (1 - p));
      expect(Math.abs(kept - n * (1 - p)), `key ${k0}, ${k1}: kept ${kept} of ${n}`).toBeLessThan(5 * sigma);
    }
  });

  it('keeps everything at p = 0 and nothing at p = 1, and writes only keep[0..n)', () => {
    expect(countKept(maskOf(0, 5, 6, 1000), 1000)).toBe(1000);
    expect(countKept(maskOf(1, 5, 6, 1000), 1000)).toBe(0);
    const keep = new Uint8Array(40).fill(7);
    backend.dropoutMask(keep, 33, 0.5, 5, 6);
    expect(keep.subarray(0, 33).every((v) => v === 0 || v === 1)).toBe(true);
    expect(Array.from(keep.subarray(33))).toEqual([7, 7, 7, 7, 7, 7, 7]);
  });

  it('depends on both key words: masks under different keys agree only by chance', () => {
    const p = 0.5;
    const base = maskOf(p, 0x12345678, 0x9abcdef0);
    // Two independent masks agree where both keep or both drop: p² + (1 − p)² of the time.
    const expected = n * (p * p + (1 - p) * (1 - p));
    const sigma = Math.sqrt(n * 0.25);
    for (const [k0, k1] of [
      [0x12345679, 0x9abcdef0],
      [0x12345678, 0x9abcdef1],
      [0x92345678, 0x9abcdef0],
      [0, 0],
    ] as const) {
      const other = maskOf(p, k0, k1);
      let agree = 0;
      for (let i = 0; i < n; i++) if (other[i] === base[i]) agree++;
      expect(
        Math.abs(agree - expected),
        `key ${k0.toString(16)}, ${k1.toString(16)}: ${agree} of ${n} agree`,
      ).toBeLessThan(5 * sigma);
    }
  });

  it.each([0.1, 0.5])('leaves neighbouring elements uncorrelated (lags 1, 4, 16; p = %f)', (p) => {
    const keep = maskOf(p, 0x0badf00d, 7);
    for (const lag of [1, 4, 16]) {
      // Under independence the sample correlation is ≈ N(0, 1/n).
      expect(Math.abs(lagCorrelation(keep, n, lag)), `lag ${lag}`).toBeLessThan(5 / Math.sqrt(n - lag));
    }
  });
});

describe('drawKeepMask', () => {
  it('takes its key from the next two words of the rng, whatever n is, on the backend it is given', () => {
    const backend = backendCases().at(-1)!.backend;
    for (const n of [0, 5, 1000]) {
      const rng = new Rng(11);
      const twin = new Rng(11);
      const keep = new Uint8Array(n);
      drawKeepMask(keep, n, 0.3, rng, backend);
      const want = new Uint8Array(n);
      dropoutMask(want, n, 0.3, twin.nextU32(), twin.nextU32());
      expect(Array.from(keep)).toEqual(Array.from(want));
      expect(rng.state()).toEqual(twin.state());
    }
  });
});

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
    expectClose(
      dx,
      dy.map((v) => v + 1),
      tol,
    );
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
    expectClose(
      y,
      x.map((v, i) => (keep[i] === 1 ? v / (1 - p) : 0)),
      tol,
    );
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
    expectClose(
      dx,
      once.map((v) => 2 * v),
      tol,
    );
  });

  it('p = 1 drops everything without producing NaN', () => {
    const y = backend.alloc(4);
    backend.dropoutForward(y, toBackend(backend, [1, 2, 3, 4]), new Uint8Array(4), 4, 1);
    expect(Array.from(y)).toEqual([0, 0, 0, 0]);
  });
});
