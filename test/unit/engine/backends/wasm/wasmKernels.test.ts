/**
 * Randomized equivalence of every WebAssembly kernel besides matmul and attention (their
 * own files) with the float64 reference, at sizes with SIMD tails (not multiples of 4) and
 * above the parallel threshold; plus the backend's memory contract: views stay valid when
 * the memory grows, and arrays outside wasm memory still get correct results.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Backend, FloatArray } from '../../../../../src/engine/backend';
import { drawKeepMask } from '../../../../../src/engine/ops/dropout';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import type { WasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { WASM_BUILDS } from './wasmBuilds';
import { EngineError } from '../../../../../src/engine/errors';
import { Rng } from '../../../../../src/engine/rng';
import { expectClose, randn } from '../../ops/opTestUtils';

let wasm = createWasmBackend()!;
const ref = createReferenceBackend({ dtype: 'f64' });
const TOL = { rtol: 3e-5, atol: 3e-6 };

/** The same values in a wasm buffer and in a float64 array. */
function pair(values: ArrayLike<number>): [FloatArray, Float64Array] {
  const w = wasm.alloc(values.length);
  for (let i = 0; i < values.length; i++) w[i] = values[i] as number;
  return [w, Float64Array.from(w)];
}

/** Runs `f` on both backends with fresh copies of `inputs`; compares every input/output array after. */
function both(inputs: ArrayLike<number>[], f: (be: Backend, xs: FloatArray[]) => void, what: string, tol = TOL): void {
  const pairs = inputs.map(pair);
  f(
    wasm,
    pairs.map((p) => p[0]),
  );
  f(
    ref,
    pairs.map((p) => p[1]),
  );
  pairs.forEach(([w, r], i) => expectClose(w, r, tol, `${what}: array ${i}`));
}

for (const [label, fma] of WASM_BUILDS) {
  describe(`wasm kernels against the float64 reference — ${label}`, () => {
    beforeAll(() => {
      wasm = createWasmBackend({ fma })!;
    });

    const rng = new Rng(2024);
    const sizes = [1, 3, 17, 1001, 70001];

    it.each(sizes)('element-wise kernels (n = %i)', (n) => {
      const x = randn(rng, n, 2),
        y = randn(rng, n),
        z = randn(rng, n);
      both([x, y], (be, [a]) => be.fill(a!, n, 0.25), 'fill');
      both([x, y], (be, [a]) => be.fill(a!, n, 0), 'fill 0');
      both([x], (be, [a]) => be.scale(a!, n, -1.5), 'scale');
      both([x, y, z], (be, [o, a, b]) => be.add(o!, a!, b!, n), 'add');
      both([x, y], (be, [a, b]) => be.add(a!, a!, b!, n), 'add in place');
      const [w] = pair(x);
      expect(wasm.sumSquares(w!, n) / ref.sumSquares(Float64Array.from(w!), n)).toBeCloseTo(1, 6);
      both([z, x], (be, [out, a]) => be.reluForward(out!, a!, n), 'relu');
      both([z, y, x], (be, [dx, dy, a]) => be.reluBackward(dx!, dy!, a!, n), 'relu backward');
      both([z, x], (be, [out, a]) => be.geluForward(out!, a!, n), 'gelu');
      both([z, y, x], (be, [dx, dy, a]) => be.geluBackward(dx!, dy!, a!, n), 'gelu backward');
      both([z, x], (be, [out, a]) => be.geluTanhForward(out!, a!, n), 'gelu tanh');
      both([z, y, x], (be, [dx, dy, a]) => be.geluTanhBackward(dx!, dy!, a!, n), 'gelu tanh backward');
      const keep = new Uint8Array(n);
      drawKeepMask(keep, n, 0.3, new Rng(n));
      both([z, x], (be, [out, a]) => be.dropoutForward(out!, a!, keep, n, 0.3), 'dropout');
      both([z, y], (be, [dx, dy]) => be.dropoutBackward(dx!, dy!, keep, n, 0.3), 'dropout backward');
      both([z, x], (be, [out, a]) => be.dropoutForward(out!, a!, keep, n, 0), 'dropout p = 0');
    });

    it.each([1, 3, 15, 16, 17, 33, 1001, 70001, 131075])(
      "dropout keep-mask: the reference's bytes exactly (n = %i)",
      (n) => {
        for (const p of [0, 0.1, 0.5, 0.9, 1]) {
          for (const [k0, k1] of [
            [0, 0],
            [0x12345678, 0x9abcdef0],
            [0xffffffff, 1],
            [-1, 2 ** 32 + 5],
          ] as const) {
            const want = new Uint8Array(n + 3).fill(9);
            ref.dropoutMask(want, n, p, k0, k1);
            const inHeap = wasm.allocBytes!(n + 3).fill(9);
            const plain = new Uint8Array(n + 3).fill(9);
            const unaligned = wasm.allocBytes!(n + 8)
              .fill(9)
              .subarray(5);
            wasm.dropoutMask(inHeap, n, p, k0, k1);
            wasm.dropoutMask(plain, n, p, k0, k1);
            wasm.dropoutMask(unaligned, n, p, k0, k1);
            for (const [what, got] of [
              ['in wasm memory', inHeap],
              ['plain array', plain],
              ['unaligned view', unaligned],
            ] as const) {
              let firstDiff = -1;
              for (let i = 0; i < n + 3 && firstDiff < 0; i++) if (got[i] !== want[i]) firstDiff = i;
              expect(firstDiff, `${what}, p ${p}, key ${k0}, ${k1}: first differing byte at ${firstDiff}`).toBe(-1);
            }
          }
        }
      },
    );

    it.each([
      [3, 5],
      [37, 67],
      [300, 130],
      [2048, 64],
    ])('layer norm, bias and softmax rows (%i × %i)', (N, C) => {
      const x = randn(rng, N * C, 3),
        dy = randn(rng, N * C),
        w = randn(rng, C),
        b = randn(rng, C);
      both(
        [new Float64Array(N * C), new Float64Array(N), new Float64Array(N), x, w, b],
        (be, [y, mean, rstd, xx, ww, bb]) => {
          be.layernormForward(y!, mean!, rstd!, xx!, ww!, bb!, N, C, 1e-5);
        },
        'layernorm forward',
      );
      both(
        [
          new Float64Array(N * C),
          new Float64Array(N),
          new Float64Array(N),
          x,
          w,
          randn(rng, C),
          randn(rng, C),
          dy,
          randn(rng, N * C),
        ],
        (be, [y, mean, rstd, xx, ww, dw, db, dyy, dx]) => {
          be.layernormForward(y!, mean!, rstd!, xx!, ww!, null, N, C, 1e-5);
          be.layernormBackward(dx!, dw!, db!, dyy!, xx!, mean!, rstd!, ww!, N, C);
          be.layernormBackward(dx!, dw!, null, dyy!, xx!, mean!, rstd!, ww!, N, C);
        },
        'layernorm backward',
        { rtol: 1e-4, atol: 1e-4 },
      );
      both([x, b], (be, [y, bias]) => be.addBias(y!, bias!, N, C), 'addBias');
      both([b, dy], (be, [db, d]) => be.biasBackward(db!, d!, N, C), 'biasBackward', { rtol: 1e-4, atol: 1e-4 });
      const mask = new Uint8Array(2 * C * C);
      for (let i = 0; i < mask.length; i++) mask[i] = rng.next() < 0.8 ? 1 : 0;
      const view = { data: mask, batchStride: C * C, rowStride: C };
      const rows = Math.min(N, 2 * C);
      both(
        [new Float64Array(rows * C), x],
        (be, [y, xx]) => be.softmaxForward(y!, xx!, rows, C, view, C),
        'masked softmax',
      );
      both(
        [new Float64Array(rows * C), x, dy, randn(rng, rows * C)],
        (be, [y, xx, d, dx]) => {
          be.softmaxForward(y!, xx!, rows, C, null, 1);
          be.softmaxBackward(dx!, d!, y!, rows, C);
        },
        'softmax backward',
      );
    });

    it.each([
      [5, 7, 0],
      [9, 67, 0.1],
      [2048, 256, 0.1],
    ])('cross-entropy (N %i, V %i, smoothing %f) with ignored rows', (N, V, eps) => {
      const logits = randn(rng, N * V, 4);
      const targets = Int32Array.from({ length: N }, (_, i) => (i % 5 === 3 ? 0 : rng.int(V)));
      const [lw, lr] = pair(logits);
      const lseW = wasm.alloc(N),
        lseR = new Float64Array(N);
      const a = wasm.crossEntropyForward(lseW, lw, targets, N, V, 0, eps);
      const e = ref.crossEntropyForward(lseR, lr, targets, N, V, 0, eps);
      expect(a.count).toBe(e.count);
      expect(Math.abs(a.sum - e.sum)).toBeLessThan(1e-5 * Math.abs(e.sum) + 1e-5);
      expectClose(lseW, lseR, TOL, 'lse');
      both(
        [new Float64Array(N * V), logits],
        (be, [d, z]) => {
          const lse = be.alloc(N);
          be.crossEntropyForward(lse, z!, targets, N, V, 0, eps);
          be.crossEntropyBackward(d!, z!, lse, targets, N, V, 0, eps, 1 / N);
        },
        'cross-entropy backward',
      );
    });

    it('cross-entropy and embedding reject bad ids with the reference EngineError', () => {
      const [z] = pair(randn(rng, 12));
      expect(() => wasm.crossEntropyForward(wasm.alloc(3), z!, Int32Array.from([1, 9, 2]), 3, 4, -1, 0)).toThrow(
        EngineError,
      );
      const [table] = pair(randn(rng, 20));
      expect(() => wasm.embeddingForward(wasm.alloc(8), Int32Array.from([1, 5]), table!, 2, 4, 1)).toThrow(
        /outside the embedding table/,
      );
    });

    it.each([
      [6, 5, 8],
      [300, 50, 67],
    ])('embeddings and positions (N %i, V %i, C %i), repeated ids and a padding row', (N, V, C) => {
      const ids = Int32Array.from({ length: N }, (_, i) => (i % 7 === 0 ? 0 : 1 + rng.int(V - 1)));
      both(
        [new Float64Array(N * C), randn(rng, V * C)],
        (be, [out, table]) => be.embeddingForward(out!, ids, table!, N, C, 2.5),
        'embedding',
      );
      both(
        [randn(rng, V * C), randn(rng, N * C)],
        (be, [dt, d]) => be.embeddingBackward(dt!, d!, ids, N, C, 2.5, 0),
        'embedding backward',
      );
      const T = 3,
        B = Math.floor(N / T);
      both(
        [randn(rng, B * T * C), randn(rng, 9 * C)],
        (be, [x, pe]) => be.positionalForward(x!, pe!, B, T, C, 4),
        'positional',
      );
      both(
        [randn(rng, 9 * C), randn(rng, B * T * C)],
        (be, [dpe, dx]) => be.positionalBackward(dpe!, dx!, B, T, C, 2),
        'positional backward',
      );
    });

    it.each([7, 90001])('Adam and AdamW (n = %i)', (n) => {
      const mask = Uint8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0));
      for (const [wd, m] of [
        [0, null],
        [0.1, mask],
      ] as const) {
        both(
          [randn(rng, n), randn(rng, n), randn(rng, n, 0.1), randn(rng, n, 0.1).map(Math.abs)],
          (be, [p, g, mm, vv]) => {
            for (let step = 1; step <= 3; step++)
              be.adamStep(
                p!,
                g!,
                mm!,
                vv!,
                n,
                { lr: 0.01, beta1: 0.9, beta2: 0.98, eps: 1e-9, weightDecay: wd, step },
                m,
              );
          },
          `adam wd ${wd}`,
          { rtol: 1e-4, atol: 1e-6 },
        );
      }
    });
  });
}

for (const [label, fma] of WASM_BUILDS) {
  describe(`wasm backend memory — ${label}`, () => {
    beforeAll(() => {
      wasm = createWasmBackend({ fma })!;
    });

    it('keeps earlier views valid when the memory grows, and runs kernels on them', () => {
      const be = createWasmBackend({ initialMemoryMiB: 1 })!;
      const early = be.alloc(1000);
      early.fill(3);
      const before = be.heapBytes();
      const big = be.alloc(4 << 20); // 16 MiB: forces growth
      expect(be.heapBytes()).toBeGreaterThan(before + (16 << 20) - 1);
      big[big.length - 1] = 7;
      be.scale(early, 1000, 2);
      expect(early[999]).toBe(6);
      expect(be.sumSquares(early, 1000)).toBe(36000);
      const late = be.alloc(1000);
      be.add(late, early, early, 1000);
      expect(late[0]).toBe(12);
    });

    it("runs its kernels on views made after another backend's memory grew (V8 then hands out new buffer objects)", () => {
      const other = createWasmBackend({ fma, initialMemoryMiB: 1 })!;
      const n = 64;
      const a = wasm.alloc(n * n),
        b = wasm.alloc(n * n);
      other.alloc(4 << 20); // grows the other memory
      const c = wasm.alloc(n * n); // a view on this memory's buffer object of now
      a.fill(1);
      b.fill(2);
      const before = (wasm as WasmBackend).jobStats();
      wasm.matmul(c, a, b, n, n, n, false, false, false);
      const after = (wasm as WasmBackend).jobStats();
      expect(after.single + after.parallel).toBe(before.single + before.parallel + 1); // ran in wasm, not the reference
      expect(c[0]).toBe(2 * n);
    });

    it('reads and writes byte buffers from allocBytes in place (no staging copy), also after another memory grew', () => {
      const be = createWasmBackend({ fma, initialMemoryMiB: 1 })!;
      const other = createWasmBackend({ fma, initialMemoryMiB: 1 })!;
      const n = 5000;
      const early = be.allocBytes!(n);
      other.alloc(4 << 20); // grows the other memory: V8 hands this one a new buffer object
      const late = be.allocBytes!(n);
      const x = be.alloc(n),
        y = be.alloc(n),
        dx = be.alloc(n);
      x.fill(1);
      const before = be.heapBytes();
      for (const keep of [early, late]) {
        be.dropoutMask(keep, n, 0.5, 3, 4);
        be.dropoutForward(y, x, keep, n, 0.5);
        be.dropoutBackward(dx, y, keep, n, 0.5);
      }
      expect(be.heapBytes()).toBe(before); // a staging region would have been allocated
      expect(y[0]).toBe(late[0] === 1 ? 2 : 0);
      be.dropoutForward(y, x, new Uint8Array(n), n, 0.5); // a plain array is staged
      expect(be.heapBytes()).toBeGreaterThan(before);
    });

    it('gives correct results (through the reference kernels) for plain arrays outside its memory', () => {
      const rng = new Rng(9);
      const a = randn(rng, 6 * 5),
        b = randn(rng, 5 * 4);
      const plain = new Float32Array(24);
      wasm.matmul(plain, Float32Array.from(a), Float32Array.from(b), 6, 4, 5, false, false, false);
      const want = new Float64Array(24);
      ref.matmul(want, a, b, 6, 4, 5, false, false, false);
      expectClose(plain, want, TOL, 'plain-array matmul');
      const x64 = Float64Array.from(a);
      wasm.geluForward(x64, x64, 30);
      const g = new Float64Array(30);
      ref.geluForward(g, a, 30);
      expectClose(x64, g, { rtol: 1e-12, atol: 1e-13 }, 'float64 arrays take the exact reference path');
    });

    it('says what to do when a model does not fit in 4 GiB of WebAssembly memory', () => {
      const be = createWasmBackend({ initialMemoryMiB: 1 })!;
      expect(() => be.alloc(1200 * 1048576)).toThrow(EngineError);
      expect(() => be.alloc(1200 * 1048576)).toThrow(
        /4 GiB.*smaller batch, context or model, or the reference backend/,
      );
      expect(be.alloc(10)[9]).toBe(0); // still usable
    });

    it('allocates zeroed buffers and names itself', () => {
      expect(wasm.name).toBe('wasm');
      const x = wasm.alloc(4097);
      expect(x.every((v) => v === 0)).toBe(true);
      expect(x).toBeInstanceOf(Float32Array);
      const bytes = wasm.allocBytes!(4097);
      expect(bytes.every((v) => v === 0)).toBe(true);
      expect(bytes).toBeInstanceOf(Uint8Array);
    });
  });
}
