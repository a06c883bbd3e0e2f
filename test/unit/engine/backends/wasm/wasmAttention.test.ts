/**
 * The fused SIMD attention of the WebAssembly backend against the float64 reference, on
 * head sizes that fill whole vectors (D a multiple of 4, as every preset's; head sizes
 * 1..9 are wasmAttentionHeadSizes.test.ts's): forward values and probabilities, backward
 * gradients, every mask shape, dropout, strided key/value caches, odd T and S, and the
 * no-leak guarantees (NaN at padded keys, future positions, fully masked rows).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { drawKeepMask } from '../../../../../src/engine/ops/dropout';
import type { AttentionDims, MaskView } from '../../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { WASM_BUILDS } from './wasmBuilds';
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

let wasm = createWasmBackend()!;
const ref = createReferenceBackend({ dtype: 'f64' });
const TOL = { rtol: 1e-4, atol: 1e-5 };

function compare(
  dims: AttentionDims,
  mask: MaskView | null,
  keep: Uint8Array | null,
  dropP: number,
  seed: number,
  qLen?: number,
  kvLen?: number,
): void {
  compareAttention(wasm, ref, TOL, dims, mask, keep, dropP, seed, { qLen, kvLen });
}

for (const [label, fma] of WASM_BUILDS) {
  describe(`wasm fused attention (D % 4 = 0) — ${label}`, () => {
    beforeAll(() => {
      wasm = createWasmBackend({ fma })!;
    });

    const cases: [string, number, number, number, number, number][] = [
      // name, B, T, S, H, D
      ['tiny', 1, 1, 1, 1, 4],
      ['odd T and S', 2, 5, 7, 2, 8],
      ['D = 12 (an 8 + 4 column split)', 2, 6, 6, 3, 12],
      ['GPT head size 16, T = 33', 2, 33, 33, 4, 16],
      ['cross shape S > T', 3, 9, 23, 2, 20],
      ['head size 64', 1, 10, 10, 2, 64],
    ];
    it.each(cases)('%s: matches the reference without a mask', (_n, B, T, S, H, D) => {
      compare(compactDims(B, T, S, H, D), null, null, 0, 11 + T);
    });
    it.each(cases.filter((c) => c[2] === c[3]))(
      '%s: matches the reference with causal and combined masks',
      (_n, B, T, S, H, D) => {
        compare(compactDims(B, T, S, H, D), causalMask(T), null, 0, 21 + T);
        const lens = Array.from({ length: B }, (_, b) => (b === 1 ? 0 : Math.max(1, T - b - 1)));
        compare(compactDims(B, T, S, H, D), combinedMask(lens, T), null, 0, 31 + T);
      },
    );
    it.each(cases)('%s: matches the reference with a padding mask and dropout', (_n, B, T, S, H, D) => {
      const lens = Array.from({ length: B }, (_, b) => Math.max(1, S - 2 * b));
      const keep = new Uint8Array(B * H * T * S);
      drawKeepMask(keep, keep.length, 0.25, new Rng(7));
      compare(compactDims(B, T, S, H, D), paddingMask(lens, S), keep, 0.25, 41 + S);
    });

    it('reads a key/value cache through a batch stride larger than S·C, and shared k/v (stride 0)', () => {
      const [B, T, S, H, D, maxS] = [2, 3, 5, 2, 8, 9];
      const C = H * D;
      compare(
        { ...compactDims(B, T, S, H, D), kvBatchStride: maxS * C, qBatchStride: 4 * C },
        paddingMask([5, 3], S),
        null,
        0,
        51,
        B * 4 * C,
        B * maxS * C,
      );
      compare({ ...compactDims(B, T, S, H, D), kvBatchStride: 0 }, null, null, 0, 52, undefined, S * C);
    });

    // The paths the kernels pick by mask shape (assembly/attention*.ts): a row whose keys
    // below its last allowed one are all allowed takes the dense softmax, any other the
    // masked one; a key no row attends below one that some row does (a "hole", e.g. left
    // padding) makes both directions copy k and v with zeros there, and backward redo dz.
    /** Left padding (keys < pad[b] never attended) ∧ causal, and key 7 masked in even rows. */
    function holeyMask(pad: readonly number[], T: number): MaskView {
      const data = new Uint8Array(pad.length * T * T);
      pad.forEach((p, b) => {
        for (let t = 0; t < T; t++)
          for (let s = p; s <= t; s++) data[(b * T + t) * T + s] = s === 7 && t % 2 === 0 ? 0 : 1;
      });
      return { data, batchStride: T * T, rowStride: T };
    }

    it('matches the reference with masked keys inside rows and keys no row attends below attended ones', () => {
      const [B, T, H, D] = [3, 10, 2, 8];
      const keep = new Uint8Array(B * H * T * T);
      drawKeepMask(keep, keep.length, 0.2, new Rng(8));
      compare(compactDims(B, T, T, H, D), holeyMask([2, 0, 5], T), null, 0, 91);
      compare(compactDims(B, T, T, H, D), holeyMask([2, 0, 5], T), keep, 0.2, 92);
    });

    it('matches the reference when consecutive tiles attend different numbers of keys', () => {
      // Scratch rows one tile filled further than the next one does must not leak into it.
      const [B, T, H, D] = [4, 12, 2, 16];
      const lens = [12, 3, 12, 1];
      const keep = new Uint8Array(B * H * T * T);
      drawKeepMask(keep, keep.length, 0.3, new Rng(9));
      compare(compactDims(B, T, T, H, D), paddingMask(lens, T), null, 0, 93);
      compare(compactDims(B, T, T, H, D), combinedMask(lens, T), null, 0, 94);
      compare(compactDims(B, T, T, H, D), paddingMask(lens, T), keep, 0.3, 95);
    });

    it('matches the reference with whole 4-row blocks over S not a multiple of 4', () => {
      const [B, T, S, H, D] = [2, 8, 10, 2, 16];
      const keep = new Uint8Array(B * H * T * S);
      drawKeepMask(keep, keep.length, 0.25, new Rng(10));
      compare(compactDims(B, T, S, H, D), null, null, 0, 96);
      compare(compactDims(B, T, S, H, D), paddingMask([10, 6], S), keep, 0.25, 97);
    });

    it('gives a row whose every allowed score is −∞ zero probabilities and output, as the reference does', () => {
      const [B, T, H, D] = [1, 8, 1, 4];
      const rng = new Rng(98);
      const q = randn(rng, B * T * D),
        k = randn(rng, B * T * D).map((x) => Math.abs(x) + 0.5),
        v = randn(rng, B * T * D);
      q.fill(0, 5 * D, 6 * D);
      q[5 * D] = -Infinity; // row 5 (inside a full 4-row block): −∞ against every key
      const dims = compactDims(B, T, T, H, D);
      const got = runAttention(wasm, q, k, v, dims, causalMask(T), null, 0, null);
      const want = runAttention(ref, q, k, v, dims, causalMask(T), null, 0, null);
      for (let s = 0; s < T; s++) expect(got.probs[5 * T + s]).toBe(0);
      expectClose(got.probs, want.probs, TOL, 'probs');
      expectClose(got.out, want.out, TOL, 'out');
    });

    it('never reads keys no row attends below attended ones: NaN there changes nothing, and they get no gradient', () => {
      const [B, T, H, D] = [3, 10, 2, 8];
      const pad = [2, 0, 5];
      const C = H * D;
      const dims = compactDims(B, T, T, H, D);
      const mask = holeyMask(pad, T);
      const rng = new Rng(99);
      const q = randn(rng, B * T * C),
        k = randn(rng, B * T * C),
        v = randn(rng, B * T * C),
        dout = randn(rng, B * T * C);
      const base = runAttention(wasm, q, k, v, dims, mask, null, 0, dout);
      const k2 = Float64Array.from(k),
        v2 = Float64Array.from(v);
      pad.forEach((p, b) => {
        for (let s = 0; s < p; s++) for (let c = 0; c < C; c++) k2[(b * T + s) * C + c] = v2[(b * T + s) * C + c] = NaN;
      });
      const changed = runAttention(wasm, q, k2, v2, dims, mask, null, 0, dout);
      expect(Array.from(changed.out)).toEqual(Array.from(base.out));
      expect(Array.from(changed.probs)).toEqual(Array.from(base.probs));
      expect(Array.from(changed.dq)).toEqual(Array.from(base.dq));
      expect(Array.from(changed.dk)).toEqual(Array.from(base.dk));
      expect(Array.from(changed.dv)).toEqual(Array.from(base.dv));
      pad.forEach((p, b) => {
        for (let s = 0; s < p; s++) {
          for (let c = 0; c < C; c++) {
            expect(changed.dk[(b * T + s) * C + c]).toBe(0);
            expect(changed.dv[(b * T + s) * C + c]).toBe(0);
          }
        }
      });
    });

    it('never reads padded keys: NaN there changes nothing, and they get no gradient', () => {
      const [B, T, H, D] = [2, 6, 2, 8];
      const C = H * D;
      const dims = compactDims(B, T, T, H, D);
      const mask = paddingMask([6, 3], T);
      const rng = new Rng(61);
      const q = randn(rng, B * T * C),
        k = randn(rng, B * T * C),
        v = randn(rng, B * T * C),
        dout = randn(rng, B * T * C);
      const base = runAttention(wasm, q, k, v, dims, mask, null, 0, dout);
      const k2 = Float64Array.from(k),
        v2 = Float64Array.from(v);
      for (let s = 3; s < T; s++) for (let c = 0; c < C; c++) k2[(T + s) * C + c] = v2[(T + s) * C + c] = NaN;
      const changed = runAttention(wasm, q, k2, v2, dims, mask, null, 0, dout);
      expect(Array.from(changed.out)).toEqual(Array.from(base.out));
      expect(Array.from(changed.probs)).toEqual(Array.from(base.probs));
      expect(Array.from(changed.dq)).toEqual(Array.from(base.dq));
      for (let s = 3; s < T; s++) {
        for (let c = 0; c < C; c++) {
          expect(changed.dk[(T + s) * C + c]).toBe(0);
          expect(changed.dv[(T + s) * C + c]).toBe(0);
        }
      }
    });

    it('is causal exactly: changing a future position never changes an earlier output', () => {
      const [B, T, H, D] = [2, 9, 2, 8];
      const C = H * D;
      const dims = compactDims(B, T, T, H, D);
      const rng = new Rng(71);
      const q = randn(rng, B * T * C),
        k = randn(rng, B * T * C),
        v = randn(rng, B * T * C);
      const base = runAttention(wasm, q, k, v, dims, causalMask(T), null, 0, null);
      for (const future of [1, 4, 8]) {
        const [q2, k2, v2] = [q, k, v].map((x) => Float64Array.from(x)) as [Float64Array, Float64Array, Float64Array];
        for (let b = 0; b < B; b++) {
          for (let c = 0; c < C; c++) {
            const i = (b * T + future) * C + c;
            q2[i] = 5;
            k2[i] = -7;
            v2[i] = 1e6;
          }
        }
        const changed = runAttention(wasm, q2, k2, v2, dims, causalMask(T), null, 0, null);
        for (let b = 0; b < B; b++)
          for (let i = 0; i < future * C; i++) expect(changed.out[b * T * C + i]).toBe(base.out[b * T * C + i]);
      }
    });

    it('gives fully masked rows zero probabilities, zero output and zero dq, and stays finite for huge scores', () => {
      const [B, T, H, D] = [2, 5, 1, 4];
      const C = H * D;
      const dims = compactDims(B, T, T, H, D);
      const rng = new Rng(81);
      const run = runAttention(
        wasm,
        randn(rng, B * T * C, 300),
        randn(rng, B * T * C, 30),
        randn(rng, B * T * C),
        dims,
        combinedMask([5, 0], T),
        null,
        0,
        randn(rng, B * T * C),
      );
      for (let i = T * C; i < 2 * T * C; i++) {
        expect(run.out[i]).toBe(0);
        expect(run.dq[i]).toBe(0);
      }
      for (let i = T * T; i < 2 * T * T; i++) expect(run.probs[i]).toBe(0);
      for (const x of [run.out, run.probs, run.dq, run.dk, run.dv])
        expect(Array.from(x).every(Number.isFinite)).toBe(true);
    });
  });
}
