/**
 * Randomized equivalence with the float64 reference of the WebAssembly kernels of issue 29:
 * RMSNorm, RoPE, SiLU, squared ReLU, mul and the soft-cap, within 1e-5 relative, at sizes
 * with SIMD tails (not multiples of 4) and above the parallel threshold, both accumulate
 * modes and every aliasing the contracts allow; plus RoPE's bounds guard (a call whose
 * strides reach past its buffer runs the reference instead of writing over the heap).
 * Thread-count independence is in test/unit/lab/platform/threads.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Backend, FloatArray } from '../../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import type { WasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { ropeTables } from '../../../../../src/engine/ops/rope';
import { Rng } from '../../../../../src/engine/rng';
import { expectClose, randn, type Tolerance } from '../../ops/opTestUtils';
import { WASM_BUILDS } from './wasmBuilds';

let wasm = createWasmBackend()!;
const ref = createReferenceBackend({ dtype: 'f64' });
/** The bound: 1e-5 relative (the absolute part only matters for values near 0). */
const TOL: Tolerance = { rtol: 1e-5, atol: 1e-6 };

/** Runs `f` on both backends with fresh copies of `inputs`; compares every array after, and checks wasm ran it. */
function both(inputs: ArrayLike<number>[], f: (be: Backend, xs: FloatArray[]) => void, what: string, tol = TOL): void {
  const w = inputs.map((v) => {
    const a = wasm.alloc(v.length);
    a.set(v);
    return a;
  });
  const r = w.map((a) => Float64Array.from(a));
  const before = (wasm as WasmBackend).jobStats();
  f(wasm, w);
  const after = (wasm as WasmBackend).jobStats();
  expect(after.single + after.parallel, `${what}: ran in WebAssembly`).toBeGreaterThan(before.single + before.parallel);
  f(ref, r);
  w.forEach((a, i) => expectClose(a, r[i]!, tol, `${what}: array ${i}`));
}

for (const [label, fma] of WASM_BUILDS) {
  describe(`wasm RMSNorm, RoPE, SiLU, relu², mul, soft-cap against the float64 reference — ${label}`, () => {
    beforeAll(() => {
      wasm = createWasmBackend({ fma })!;
    });

    const rng = new Rng(2029);

    it.each([1, 3, 17, 1001, 70001])('element-wise kernels (n = %i)', (n) => {
      const x = randn(rng, n, 3),
        y = randn(rng, n),
        z = randn(rng, n);
      // Tails of the activations: large magnitudes (and overflow of e^−x) on both sides.
      const wide = x.map((v, i) => (i % 11 === 5 ? v * 40 : v));
      both([z, wide], (be, [out, a]) => be.siluForward(out!, a!, n), 'silu');
      both([z, y, wide], (be, [dx, dy, a]) => be.siluBackward(dx!, dy!, a!, n), 'silu backward');
      both([z, wide], (be, [out, a]) => be.relu2Forward(out!, a!, n), 'relu2');
      both([z, y, wide], (be, [dx, dy, a]) => be.relu2Backward(dx!, dy!, a!, n), 'relu2 backward');
      both([z, x, y], (be, [out, a, b]) => be.mul(out!, a!, b!, n, false), 'mul');
      both([z, x, y], (be, [out, a, b]) => be.mul(out!, a!, b!, n, true), 'mul accumulate');
      both([x, y], (be, [a, b]) => be.mul(a!, a!, b!, n, false), 'mul out = a');
      both([x, y], (be, [a, b]) => be.mul(b!, a!, b!, n, false), 'mul out = b');
      both([x], (be, [a]) => be.mul(a!, a!, a!, n, false), 'mul out = a = b');
      for (const cap of [30, 2.5]) {
        both([z, wide], (be, [out, a]) => be.softcapForward(out!, a!, n, cap), `softcap ${cap}`);
        both([wide], (be, [a]) => be.softcapForward(a!, a!, n, cap), `softcap in place ${cap}`);
        // Backward from the capped output (as the models call it), on moderate and saturated values.
        both(
          [y, wide],
          (be, [d, a]) => {
            be.softcapForward(a!, a!, n, cap);
            be.softcapBackward(d!, a!, n, cap);
          },
          `softcap backward ${cap}`,
        );
      }
    });

    it('tanh keeps its relative accuracy for tiny arguments and saturates exactly', () => {
      const x = [1e-30, -1e-20, 1e-7, -3e-4, 0.2499, 0.25, -0.2501, 1, -9, 40, -200, 1e30, 0];
      both([new Float64Array(x.length), x], (be, [y, a]) => be.softcapForward(y!, a!, x.length, 1), 'tanh');
      const [negZero, nan] = [wasm.alloc(1), wasm.alloc(1)];
      negZero[0] = -0;
      nan[0] = NaN;
      wasm.softcapForward(negZero, negZero, 1, 3);
      wasm.softcapForward(nan, nan, 1, 3);
      expect(Object.is(negZero[0], -0)).toBe(true);
      expect(nan[0]).toBeNaN();
    });

    it.each([
      [3, 5],
      [7, 1],
      [37, 67],
      [300, 130],
      [2048, 64],
    ])('RMSNorm rows (%i × %i), with and without a weight, in place, dw null', (N, C) => {
      const x = randn(rng, N * C, 3),
        dy = randn(rng, N * C),
        w = randn(rng, C);
      for (const withW of [true, false]) {
        both(
          [new Float64Array(N * C), new Float64Array(N), x, w],
          (be, [y, rstd, xx, ww]) => be.rmsnormForward(y!, rstd!, xx!, withW ? ww! : null, N, C, 1e-6),
          `rmsnorm forward (weight ${withW})`,
        );
        both(
          [new Float64Array(N), x, w],
          (be, [rstd, xx, ww]) => be.rmsnormForward(xx!, rstd!, xx!, withW ? ww! : null, N, C, 1e-6),
          `rmsnorm forward in place (weight ${withW})`,
        );
        both(
          [new Float64Array(N * C), new Float64Array(N), x, w, randn(rng, C), dy, randn(rng, N * C)],
          (be, [y, rstd, xx, ww, dw, dyy, dx]) => {
            const wt = withW ? ww! : null;
            be.rmsnormForward(y!, rstd!, xx!, wt, N, C, 1e-6);
            be.rmsnormBackward(dx!, dw!, dyy!, xx!, rstd!, wt, N, C);
            be.rmsnormBackward(dx!, null, dyy!, xx!, rstd!, wt, N, C);
          },
          `rmsnorm backward (weight ${withW})`,
          // dw sums N rows of float32 products in float32 lanes.
          { rtol: 1e-5, atol: 1e-6 * Math.sqrt(N) },
        );
      }
    });

    it.each([
      // B, T, H, D, R, start: R/2 a multiple of 4, not one (tails of 1–3 pairs), partial rotation.
      [2, 5, 3, 16, 16, 0],
      [2, 3, 2, 10, 6, 4],
      [1, 7, 4, 16, 4, 2],
      [3, 2, 1, 2, 2, 9],
      [2, 9, 3, 64, 48, 1],
      [1, 3, 5, 20, 14, 0],
      [8, 64, 8, 64, 64, 3],
    ])(
      'RoPE (B %i, T %i, H %i, D %i, R %i, start %i), forward and inverse, contiguous and strided',
      (B, T, H, D, R, start) => {
        const C = H * D;
        const t32 = ropeTables(10000, R, start + T, (n) => wasm.alloc(n));
        const cos = Array.from(t32.cos),
          sin = Array.from(t32.sin);
        for (const inverse of [false, true]) {
          both(
            [randn(rng, B * T * C), cos, sin],
            (be, [x, co, si]) => be.rope(x!, co!, si!, B, T, H, D, R, start, T * C, C, inverse),
            `rope contiguous (inverse ${inverse})`,
          );
          // q inside fused [B, T, 3C] rows of a cache with room for T + 2 positions per item.
          both(
            [randn(rng, B * (T + 2) * 3 * C), cos, sin],
            (be, [x, co, si]) => be.rope(x!, co!, si!, B, T, H, D, R, start, (T + 2) * 3 * C, 3 * C, inverse),
            `rope strided (inverse ${inverse})`,
          );
        }
        both(
          [randn(rng, B * T * C), cos, sin],
          (be, [x, co, si]) => {
            be.rope(x!, co!, si!, B, T, H, D, R, start, T * C, C, false);
            be.rope(x!, co!, si!, B, T, H, D, R, start, T * C, C, true);
          },
          'rope then its inverse',
        );
      },
    );

    it('RoPE whose strides reach past its buffer runs the reference and leaves the heap alone', () => {
      const [B, T, H, D, R] = [2, 3, 2, 8, 8];
      const { cos, sin } = ropeTables(10000, R, T, (n) => wasm.alloc(n));
      const x = wasm.alloc(B * T * H * D);
      const neighbour = wasm.alloc(64).fill(5);
      x.set(randn(rng, x.length));
      const want = Float64Array.from(x);
      ref.rope(want, cos, sin, B, T, H, D, R, 0, 2 * T * H * D, H * D, false); // batch stride twice too long
      const before = (wasm as WasmBackend).jobStats();
      wasm.rope(x, cos, sin, B, T, H, D, R, 0, 2 * T * H * D, H * D, false);
      const after = (wasm as WasmBackend).jobStats();
      expect(after.single + after.parallel).toBe(before.single + before.parallel); // not run in wasm
      expectClose(x, want, TOL, 'reference result');
      expect(Array.from(neighbour)).toEqual(new Array(64).fill(5));
      // Overlapping head rows (row stride below H·D) also take the reference's sequential path.
      const y = wasm.alloc(B * T * H * D);
      y.set(randn(rng, y.length));
      const wantY = Float64Array.from(y);
      ref.rope(wantY, cos, sin, 1, T, H, D, R, 0, 0, D, false);
      wasm.rope(y, cos, sin, 1, T, H, D, R, 0, 0, D, false);
      expectClose(y, wantY, TOL, 'overlapping rows');
    });

    it('plain arrays outside its memory get the reference results', () => {
      const n = 19;
      const x = randn(rng, n);
      const plain = Float32Array.from(x);
      const want = new Float64Array(n);
      wasm.siluForward(plain, plain, n);
      ref.siluForward(want, x, n);
      expectClose(plain, want, TOL, 'silu on a plain array');
      const rstd = new Float32Array(1);
      const y = new Float32Array(n);
      wasm.rmsnormForward(y, rstd, Float32Array.from(x), null, 1, n, 1e-6);
      const y64 = new Float64Array(n);
      ref.rmsnormForward(y64, new Float64Array(1), x, null, 1, n, 1e-6);
      expectClose(y, y64, TOL, 'rmsnorm on plain arrays');
    });
  });
}
