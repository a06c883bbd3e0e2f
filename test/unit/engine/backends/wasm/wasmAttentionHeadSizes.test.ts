/**
 * The fused SIMD attention of the WebAssembly backend at every head size 1..9, so each
 * remainder of D mod 4 takes the partial-vector paths (the last D mod 4 dimensions of the
 * key/value packing and of the products into out, dq, dk, dv) on its own and after whole
 * vectors: forward and backward against the float64 reference with several heads side by
 * side (a tail that spilled would land in the next head), every mask shape, dropout, the
 * decoding shapes (a strided cache, shared keys/values), and guards that nothing past the
 * buffers is written and that the wasm kernel, not the fallback, ran.
 *
 * Leaves out: the mask and softmax paths at SIMD-friendly sizes (wasmAttention.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { AttentionDims, FloatArray, MaskView } from '../../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import type { WasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { drawKeepMask } from '../../../../../src/engine/ops/dropout';
import { Rng } from '../../../../../src/engine/rng';
import {
  causalMask,
  combinedMask,
  compactDims,
  compareAttention,
  paddingMask,
  runAttention,
} from '../../ops/attentionFixtures';
import { expectClose, randn } from '../../ops/opTestUtils';
import { WASM_BUILDS } from './wasmBuilds';

const ref = createReferenceBackend({ dtype: 'f64' });
const TOL = { rtol: 1e-4, atol: 1e-5 };
const HEAD_SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9];

/** Left padding (keys < pad[b] never attended) ∧ causal: keys no row attends below attended ones. */
function leftPaddedCausal(pad: readonly number[], T: number): MaskView {
  const data = new Uint8Array(pad.length * T * T);
  pad.forEach((p, b) => {
    for (let t = 0; t < T; t++) for (let s = p; s <= t; s++) data[(b * T + t) * T + s] = 1;
  });
  return { data, batchStride: T * T, rowStride: T };
}

for (const [label, fma] of WASM_BUILDS) {
  describe(`wasm fused attention at head sizes 1..9 — ${label}`, () => {
    let wasm: WasmBackend;
    beforeAll(() => {
      wasm = createWasmBackend({ fma }) as WasmBackend;
    });

    /** Runs both directions on wasm and on the reference and compares every output. */
    function compare(
      dims: AttentionDims,
      mask: MaskView | null,
      keep: Uint8Array | null,
      dropP: number,
      seed: number,
      qLen?: number,
      kvLen?: number,
    ): void {
      compareAttention(wasm, ref, TOL, dims, mask, keep, dropP, seed, { qLen, kvLen }, (run) => {
        const before = wasm.jobStats();
        const got = run();
        const after = wasm.jobStats();
        // Forward and backward each ran a wasm kernel (the fallback runs none).
        expect(after.single + after.parallel - before.single - before.parallel).toBe(2);
        return got;
      });
    }

    it.each(HEAD_SIZES)('D = %i: matches the reference without a mask, S > T, three heads', (D) => {
      compare(compactDims(2, 5, 11, 3, D), null, null, 0, 100 + D);
    });

    it.each(HEAD_SIZES)('D = %i: matches the reference with causal and combined masks', (D) => {
      compare(compactDims(2, 9, 9, 3, D), causalMask(9), null, 0, 110 + D);
      compare(compactDims(3, 9, 9, 2, D), combinedMask([9, 0, 4], 9), null, 0, 120 + D);
    });

    it.each(HEAD_SIZES)('D = %i: matches the reference with a padding mask and dropout', (D) => {
      const [B, T, S, H] = [2, 6, 10, 3];
      const keep = new Uint8Array(B * H * T * S);
      drawKeepMask(keep, keep.length, 0.25, new Rng(D));
      compare(compactDims(B, T, S, H, D), paddingMask([10, 7], S), keep, 0.25, 130 + D);
    });

    it.each(HEAD_SIZES)(
      'D = %i: matches the reference when keys no row attends lie below attended ones (packed rows)',
      (D) => {
        compare(compactDims(3, 10, 10, 2, D), leftPaddedCausal([2, 0, 5], 10), null, 0, 140 + D);
      },
    );

    it.each(HEAD_SIZES)(
      'D = %i: matches the reference on decoding shapes: one query over a strided cache, and shared keys/values',
      (D) => {
        const [B, S, H, maxS] = [3, 7, 2, 12];
        const C = H * D;
        compare(
          { ...compactDims(B, 1, S, H, D), kvBatchStride: maxS * C },
          null,
          null,
          0,
          150 + D,
          B * C,
          B * maxS * C,
        );
        const sourcePadding = { data: paddingMask([5], S).data, batchStride: 0, rowStride: 0 }; // cross-attention while decoding
        compare({ ...compactDims(B, 1, S, H, D), kvBatchStride: 0 }, sourcePadding, null, 0, 160 + D, B * C, S * C);
      },
    );

    it.each([1, 3, 5, 6, 7])('D = %i: writes nothing past the arrays it was given', (D) => {
      const [B, T, H] = [2, 7, 3];
      const C = H * D;
      const n = B * T * C;
      const pad = 8;
      const rng = new Rng(170 + D);
      // Each operand is the front of a longer heap buffer whose tail holds sentinels.
      const buffers = Array.from({ length: 8 }, () => wasm.alloc(n + pad));
      const [q, k, v, out, dq, dk, dv, dout] = buffers.map((b) => b.subarray(0, n)) as [
        FloatArray,
        FloatArray,
        FloatArray,
        FloatArray,
        FloatArray,
        FloatArray,
        FloatArray,
        FloatArray,
      ];
      for (const x of [q, k, v, dout]) x.set(randn(rng, n));
      for (const b of buffers) b.fill(-7, n);
      const dims = compactDims(B, T, T, H, D);
      const probs = wasm.alloc(B * H * T * T);
      const before = wasm.jobStats();
      wasm.attentionForward(out, probs, q, k, v, dims, causalMask(T), null, 0);
      wasm.attentionBackward(dq, dk, dv, dout, probs, q, k, v, dims, null, 0);
      const after = wasm.jobStats();
      expect(after.single + after.parallel - before.single - before.parallel).toBe(2);
      for (const b of buffers) expect(Array.from(b.subarray(n))).toEqual(new Array<number>(pad).fill(-7));
      const want = runAttention(ref, q, k, v, dims, causalMask(T), null, 0, dout);
      expectClose(out, want.out, TOL, 'out');
      expectClose(dq, want.dq, TOL, 'dq');
      expectClose(dk, want.dk, TOL, 'dk');
      expectClose(dv, want.dv, TOL, 'dv');
    });
  });
}
