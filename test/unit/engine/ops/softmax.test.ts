import { describe, expect, it } from 'vitest';
import type { MaskView } from '../../../../src/engine/backend';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import {
  backendCases,
  expectAllFinite,
  expectClose,
  expectGradOk,
  oracle,
  randn,
  toBackend,
  weightedSum,
} from './opTestUtils';

/** exp(x)/Σexp(x) over the allowed entries of each row, straight from the definition. */
function naiveSoftmax(
  x: ArrayLike<number>,
  rows: number,
  cols: number,
  allowed: (r: number, c: number) => boolean,
): Float64Array {
  const y = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    let z = 0;
    for (let c = 0; c < cols; c++) if (allowed(r, c)) z += Math.exp(x[r * cols + c] as number);
    for (let c = 0; c < cols; c++) y[r * cols + c] = allowed(r, c) ? Math.exp(x[r * cols + c] as number) / z : 0;
  }
  return y;
}

/** Mask value for row r (batch ⌊r / rowsPerBatch⌋), as the kernel contract defines it. */
function maskAt(m: MaskView, rowsPerBatch: number, r: number, c: number): boolean {
  return m.data[Math.floor(r / rowsPerBatch) * m.batchStride + (r % rowsPerBatch) * m.rowStride + c] === 1;
}

describe.each(backendCases())('softmax ($label)', ({ backend, tol, grad }) => {
  it('matches a hand-checkable row', () => {
    const y = backend.alloc(3);
    backend.softmaxForward(y, toBackend(backend, [1, 2, 3]), 1, 3, null, 1);
    const z = Math.E + Math.E ** 2 + Math.E ** 3;
    expectClose(y, [Math.E / z, Math.E ** 2 / z, Math.E ** 3 / z], tol);
  });

  it('matches exp/Σexp on random rows, and every row sums to 1', () => {
    const rng = new Rng(71);
    const [rows, cols] = [6, 9];
    const x = randn(rng, rows * cols, 2);
    const y = backend.alloc(rows * cols);
    backend.softmaxForward(y, toBackend(backend, x), rows, cols, null, rows);
    expectClose(
      y,
      naiveSoftmax(x, rows, cols, () => true),
      tol,
    );
    for (let r = 0; r < rows; r++) {
      let s = 0;
      for (let c = 0; c < cols; c++) s += y[r * cols + c] as number;
      expect(Math.abs(s - 1)).toBeLessThan(1e-6);
    }
  });

  it('works in place (y aliasing x)', () => {
    const rng = new Rng(72);
    const x = randn(rng, 12);
    const y = toBackend(backend, x);
    backend.softmaxForward(y, y, 3, 4, null, 3);
    expectClose(
      y,
      naiveSoftmax(x, 3, 4, () => true),
      tol,
    );
  });

  it('stays finite for large logits (1e4) and is shift-invariant', () => {
    const y = backend.alloc(6);
    backend.softmaxForward(y, toBackend(backend, [1e4, 1e4 - 1, -1e4, -1e4, -1e4 + 2, -1e4 + 1]), 2, 3, null, 2);
    expectAllFinite(y);
    const small = naiveSoftmax([1, 0, -2e4, 0, 2, 1], 2, 3, () => true);
    expectClose(y, small, tol);
  });

  it('gives −Infinity entries probability exactly 0, and an all −Infinity row zeros (not NaN)', () => {
    const y = toBackend(backend, [9, 9, 9, 9, 9, 9]); // stale contents must be overwritten
    backend.softmaxForward(y, toBackend(backend, [0, -Infinity, 0, -Infinity, -Infinity, -Infinity]), 2, 3, null, 2);
    expect(Array.from(y)).toEqual([0.5, 0, 0.5, 0, 0, 0]);
  });

  it('applies padding [B,1,1,S], causal [1,1,T,T] and combined [B,1,T,T] mask views', () => {
    const rng = new Rng(73);
    const [B, T] = [2, 4];
    const S = T;
    const rows = B * T;
    const padding = Uint8Array.from([1, 1, 1, 0, /* batch 1 */ 0, 1, 1, 1]); // [B, S]
    const causal = new Uint8Array(T * T);
    for (let t = 0; t < T; t++) for (let s = 0; s <= t; s++) causal[t * T + s] = 1;
    const combined = new Uint8Array(B * T * T);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        for (let s = 0; s < S; s++)
          combined[(b * T + t) * S + s] = (padding[b * S + s] as number) & (causal[t * T + s] as number);
      }
    }
    const views: Record<string, MaskView> = {
      padding: { data: padding, batchStride: S, rowStride: 0 },
      causal: { data: causal, batchStride: 0, rowStride: T },
      combined: { data: combined, batchStride: T * T, rowStride: T },
    };
    const x = randn(rng, rows * S);
    for (const [name, view] of Object.entries(views)) {
      const y = backend.alloc(rows * S);
      backend.softmaxForward(y, toBackend(backend, x), rows, S, view, T);
      const allowed = (r: number, c: number): boolean => maskAt(view, T, r, c);
      expectClose(y, naiveSoftmax(x, rows, S, allowed), tol, name);
      for (let r = 0; r < rows; r++) {
        let s = 0;
        for (let c = 0; c < S; c++) {
          if (!allowed(r, c)) expect(y[r * S + c], `${name} masked (${r},${c})`).toBe(0);
          s += y[r * S + c] as number;
        }
        // Batch 1 row 0 of the combined mask is fully masked (its only causal key is padding).
        const full = Array.from({ length: S }, (_, c) => allowed(r, c)).some(Boolean);
        expect(Math.abs(s - (full ? 1 : 0)), `${name} row ${r} sum`).toBeLessThan(1e-6);
      }
    }
    // The combined mask does have a fully masked row, and it comes out as zeros even over
    // stale contents.
    const y = backend.alloc(rows * S);
    backend.fill(y, rows * S, NaN);
    backend.softmaxForward(y, toBackend(backend, x), rows, S, views.combined as MaskView, T);
    expect(Array.from(y.subarray(T * S, T * S + S))).toEqual([0, 0, 0, 0]);
  });

  it('never reads masked scores: NaN or huge values there change nothing', () => {
    const mask: MaskView = { data: Uint8Array.from([1, 0, 1, 0]), batchStride: 0, rowStride: 0 };
    const a = backend.alloc(4);
    const b = backend.alloc(4);
    backend.softmaxForward(a, toBackend(backend, [0.3, 1, -0.2, 2]), 1, 4, mask, 1);
    backend.softmaxForward(b, toBackend(backend, [0.3, NaN, -0.2, 1e30]), 1, 4, mask, 1);
    expect(Array.from(b)).toEqual(Array.from(a));
  });

  it('backward matches finite differences (with a mask), gives masked entries nothing, and accumulates', () => {
    const rng = new Rng(74);
    const [rows, cols] = [4, 5];
    const mask: MaskView = { data: Uint8Array.from([1, 1, 0, 1, 0, 1, 0, 1, 1, 1]), batchStride: cols, rowStride: 0 };
    const x = randn(rng, rows * cols);
    const r = randn(rng, rows * cols);
    const y = backend.alloc(rows * cols);
    backend.softmaxForward(y, toBackend(backend, x), rows, cols, mask, 2);
    const dx = backend.alloc(rows * cols);
    backend.softmaxBackward(dx, toBackend(backend, r), y, rows, cols);
    const ref = oracle();
    const y64 = new Float64Array(rows * cols);
    const f = (): number => {
      ref.softmaxForward(y64, x, rows, cols, mask, 2);
      return weightedSum(y64, r);
    };
    expectGradOk(gradCheck(f, x, dx, grad));
    for (let i = 0; i < rows * cols; i++) if (y[i] === 0) expect(dx[i]).toBe(0);
    const once = Array.from(dx);
    backend.softmaxBackward(dx, toBackend(backend, r), y, rows, cols);
    expectClose(
      dx,
      once.map((v) => 2 * v),
      tol,
    );
  });
});
