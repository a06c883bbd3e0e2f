import { describe, expect, it } from 'vitest';
import type { Backend, FloatArray } from '../../../../src/engine/backend';
import { ropeInvFreq, ropeTables } from '../../../../src/engine/ops/rope';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

/** The rotate-half RoPE of ROUND29 written out per element in float64, angles from scratch. */
function naiveRope(
  x: ArrayLike<number>,
  theta: number,
  B: number,
  T: number,
  H: number,
  D: number,
  R: number,
  start: number,
  batchStride: number,
  rowStride: number,
): Float64Array {
  const out = Float64Array.from(x);
  const half = R / 2;
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let h = 0; h < H; h++) {
        const base = b * batchStride + t * rowStride + h * D;
        for (let i = 0; i < half; i++) {
          const angle = (start + t) * Math.pow(theta, (-2 * i) / R);
          const x1 = x[base + i] as number;
          const x2 = x[base + half + i] as number;
          out[base + i] = x1 * Math.cos(angle) - x2 * Math.sin(angle);
          out[base + half + i] = x2 * Math.cos(angle) + x1 * Math.sin(angle);
        }
      }
  return out;
}

function tables(backend: Backend, theta: number, R: number, positions: number): { cos: FloatArray; sin: FloatArray } {
  return ropeTables(theta, R, positions, (n) => backend.alloc(n));
}

describe('ropeInvFreq: the frequency scalings of transformers (modeling_rope_utils)', () => {
  it('linear divides every frequency by the factor, and the tables turn by the scaled angles', () => {
    const plain = ropeInvFreq(10000, 8);
    const lin = ropeInvFreq(10000, 8, { type: 'linear', factor: 8 });
    for (let i = 0; i < 4; i++) {
      expect(plain[i]).toBe(Math.pow(10000, -i / 4));
      expect(lin[i]).toBe((plain[i] as number) / 8);
    }
    const t = ropeTables(10000, 8, 3, (n) => new Float64Array(n), { type: 'linear', factor: 8 });
    expect(t.sin[4 + 0]).toBe(Math.sin(1 / 8)); // position 1, pair 0
  });

  it("llama3 keeps the high frequencies, divides the low ones and blends the band between (Llama 3.2's numbers)", () => {
    const s = { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxLen: 8192 } as const;
    const plain = ropeInvFreq(500000, 64);
    const scaled = ropeInvFreq(500000, 64, s);
    let kept = 0;
    let divided = 0;
    let blended = 0;
    for (let i = 0; i < 32; i++) {
      const f = plain[i] as number;
      const g = scaled[i] as number;
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < 8192 / 4) {
        expect(g).toBe(f);
        kept++;
      } else if (wavelen > 8192) {
        expect(g).toBe(f / 32);
        divided++;
      } else {
        // The blend by hand: s = (8192 / λ − 1) / (4 − 1), (1 − s)·f/32 + s·f; strictly between f/32 and f.
        const sm = (8192 / wavelen - 1) / 3;
        expect(g).toBeCloseTo((1 - sm) * (f / 32) + sm * f, 15);
        expect(g).toBeGreaterThan(f / 32);
        expect(g).toBeLessThan(f);
        blended++;
      }
    }
    // Head 64 at θ 500000: pairs 0–14 kept, 15–17 blended, 18–31 divided (as transformers computes them).
    expect([kept, blended, divided]).toEqual([15, 3, 14]);
  });
});

describe('ropeTables', () => {
  it('fills [positions, R/2] with cos/sin(p · theta^(−2i/R)) in float64, rounded to the buffer type', () => {
    const t64 = ropeTables(10000, 8, 5, (n) => new Float64Array(n));
    const t32 = ropeTables(10000, 8, 5, (n) => new Float32Array(n));
    expect(t64.cos.length).toBe(20);
    for (let p = 0; p < 5; p++)
      for (let i = 0; i < 4; i++) {
        const angle = p * Math.pow(10000, -i / 4);
        expect(t64.cos[p * 4 + i]).toBe(Math.cos(angle));
        expect(t64.sin[p * 4 + i]).toBe(Math.sin(angle));
        expect(t32.cos[p * 4 + i]).toBe(Math.fround(Math.cos(angle)));
        expect(t32.sin[p * 4 + i]).toBe(Math.fround(Math.sin(angle)));
      }
    // Position 0 is the identity; pair 0 turns by one radian per position.
    expect(Array.from(t64.cos.subarray(0, 4))).toEqual([1, 1, 1, 1]);
    expect(t64.sin[4]).toBe(Math.sin(1));
  });
});

describe.each(backendCases())('rope ($label)', ({ backend, tol, grad }) => {
  it('rotates the pairs (c, c + R/2) of a hand-checkable head', () => {
    // D = R = 4 at position 1: pair (0, 2) turns by 1 rad, pair (1, 3) by 10000^(−1/2) = 0.01 rad.
    const { cos, sin } = tables(backend, 10000, 4, 2);
    const x = toBackend(backend, [1, 2, 3, 4]);
    backend.rope(x, cos, sin, 1, 1, 1, 4, 4, 1, 4, 4, false);
    const [c1, s1, c2, s2] = [Math.cos(1), Math.sin(1), Math.cos(0.01), Math.sin(0.01)];
    expectClose(x, [1 * c1 - 3 * s1, 2 * c2 - 4 * s2, 3 * c1 + 1 * s1, 4 * c2 + 2 * s2], tol);
  });

  it('matches the per-element formula on [B, T, H·D] with partial rotation, a start, and odd sizes', () => {
    for (const [B, T, H, D, R, start] of [
      [2, 5, 3, 8, 8, 0],
      [2, 3, 2, 10, 6, 4],
      [1, 7, 4, 16, 4, 2],
      [3, 2, 1, 2, 2, 9],
      [1, 3, 2, 64, 48, 1],
    ] as const) {
      const rng = new Rng(81 + D);
      const size = B * T * H * D;
      const x = randn(rng, size);
      const { cos, sin } = tables(backend, 500, R, start + T);
      const bx = toBackend(backend, x);
      backend.rope(bx, cos, sin, B, T, H, D, R, start, T * H * D, H * D, false);
      expectClose(bx, naiveRope(x, 500, B, T, H, D, R, start, T * H * D, H * D), tol, `${B},${T},${H},${D},${R}`);
      // Channels R..D−1 of every head are untouched, bit for bit.
      for (let row = 0; row < B * T * H; row++)
        for (let c = R; c < D; c++) expect(bx[row * D + c]).toBe(x[row * D + c]);
    }
  });

  it('the inverse undoes the forward, and both keep each pair’s length', () => {
    const rng = new Rng(82);
    const [B, T, H, D, R] = [2, 6, 3, 12, 8];
    const x = randn(rng, B * T * H * D);
    const { cos, sin } = tables(backend, 10000, R, T + 3);
    const bx = toBackend(backend, x);
    backend.rope(bx, cos, sin, B, T, H, D, R, 3, T * H * D, H * D, false);
    for (let row = 0; row < B * T * H; row++)
      for (let i = 0; i < R / 2; i++) {
        const [a, b] = [row * D + i, row * D + R / 2 + i];
        const before = (x[a] as number) ** 2 + (x[b] as number) ** 2;
        const after = (bx[a] as number) ** 2 + (bx[b] as number) ** 2;
        expect(Math.abs(after - before)).toBeLessThan(1e-5 * (1 + before));
      }
    expect(Array.from(bx)).not.toEqual(Array.from(x));
    backend.rope(bx, cos, sin, B, T, H, D, R, 3, T * H * D, H * D, true);
    expectClose(bx, x, { rtol: tol.rtol * 4, atol: tol.atol * 4 });
  });

  it('strides address q inside a wider buffer (a KV cache row, or fused rows) and touch nothing else', () => {
    const rng = new Rng(83);
    const [B, T, H, D, R] = [2, 3, 2, 4, 4];
    const rowStride = 3 * H * D; // rows of a [B, T, 3·H·D] buffer; q is the first H·D of each row
    const batchStride = 5 * rowStride; // a cache with room for 5 positions per item
    const x = randn(rng, B * batchStride);
    const { cos, sin } = tables(backend, 10000, R, T + 2);
    const bx = toBackend(backend, x);
    backend.rope(bx, cos, sin, B, T, H, D, R, 2, batchStride, rowStride, false);
    expectClose(bx, naiveRope(x, 10000, B, T, H, D, R, 2, batchStride, rowStride), tol);
    for (let i = 0; i < x.length; i++) {
      const inQ = i % batchStride < T * rowStride && i % rowStride < H * D;
      if (!inQ) expect(bx[i], `element ${i}`).toBe(x[i]);
    }
  });

  it('one step at position p equals row p of the whole sequence (the KV-cache decoder)', () => {
    const rng = new Rng(84);
    const [T, H, D, R] = [6, 2, 8, 8];
    const x = randn(rng, T * H * D);
    const { cos, sin } = tables(backend, 10000, R, T);
    const whole = toBackend(backend, x);
    backend.rope(whole, cos, sin, 1, T, H, D, R, 0, T * H * D, H * D, false);
    for (let p = 0; p < T; p++) {
      const one = toBackend(backend, x.subarray(p * H * D, (p + 1) * H * D));
      backend.rope(one, cos, sin, 1, 1, H, D, R, p, H * D, H * D, false);
      expectClose(one, Array.from(whole.subarray(p * H * D, (p + 1) * H * D)), tol, `position ${p}`);
    }
  });

  it('q·k after rotation depends only on the distance between their positions', () => {
    const rng = new Rng(85);
    const D = 8;
    const q = randn(rng, D);
    const k = randn(rng, D);
    const { cos, sin } = tables(backend, 10000, D, 12);
    const dotAt = (m: number, n: number): number => {
      const bq = toBackend(backend, q);
      const bk = toBackend(backend, k);
      backend.rope(bq, cos, sin, 1, 1, 1, D, D, m, D, D, false);
      backend.rope(bk, cos, sin, 1, 1, 1, D, D, n, D, D, false);
      return weightedSum(bq, bk);
    };
    expect(Math.abs(dotAt(7, 4) - dotAt(3, 0))).toBeLessThan(1e-4);
    expect(Math.abs(dotAt(11, 5) - dotAt(6, 0))).toBeLessThan(1e-4);
    expect(Math.abs(dotAt(3, 0) - dotAt(6, 0))).toBeGreaterThan(1e-3);
  });

  it('the inverse applied to a gradient matches finite differences of the forward', () => {
    const rng = new Rng(86);
    const [B, T, H, D, R, start] = [2, 3, 2, 6, 4, 1];
    const x = randn(rng, B * T * H * D);
    const r = randn(rng, B * T * H * D);
    const ref = oracle();
    const t64 = ropeTables(10000, R, start + T, (n) => new Float64Array(n));
    const y = new Float64Array(x.length);
    const f = (): number => {
      y.set(x);
      ref.rope(y, t64.cos, t64.sin, B, T, H, D, R, start, T * H * D, H * D, false);
      return weightedSum(y, r);
    };
    const { cos, sin } = tables(backend, 10000, R, start + T);
    const d = toBackend(backend, r);
    backend.rope(d, cos, sin, B, T, H, D, R, start, T * H * D, H * D, true);
    expectGradOk(gradCheck(f, x, d, grad));
  });
});
