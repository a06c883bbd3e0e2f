/**
 * The SIMD attention's optional fields (grouped-query heads, soft-cap, ALiBi with qStart)
 * against the float64 reference, on both builds: head sizes and lengths that are not
 * multiples of the vector width, S ≠ T, key/value caches read through a batch stride
 * (T = 1 decoding steps and prefills with qStart), masks with keys no row attends, NaN at
 * padded keys, and that the SIMD kernel (not the reference fallback) ran.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { AttentionDims, Backend, MaskView } from '../../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import type { WasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { drawKeepMask } from '../../../../../src/engine/ops/dropout';
import { Rng } from '../../../../../src/engine/rng';
import { causalMask, combinedMask, compareAttention, paddingMask, runAttention } from '../../ops/attentionFixtures';
import { randn } from '../../ops/opTestUtils';
import { WASM_BUILDS } from './wasmBuilds';

let wasm = createWasmBackend() as WasmBackend;
const ref = createReferenceBackend({ dtype: 'f64' });
const TOL = { rtol: 1e-5, atol: 1e-6 };

/** ALiBi slopes 2^(−8(h+1)/H) (as float32, what a model stores). */
function slopes(H: number): Float32Array {
  return Float32Array.from({ length: H }, (_, h) => Math.pow(2, (-8 * (h + 1)) / H));
}

/** The optional fields of one case. */
interface Extra {
  readonly Hkv?: number;
  readonly softCap?: number;
  readonly alibi?: boolean;
  readonly qStart?: number;
}

function dimsOf(B: number, T: number, S: number, H: number, D: number, x: Extra): AttentionDims {
  const Hkv = x.Hkv ?? H;
  return {
    B,
    T,
    S,
    H,
    D,
    qBatchStride: T * H * D,
    kvBatchStride: S * Hkv * D,
    scale: 1 / Math.sqrt(D),
    ...(x.Hkv === undefined ? {} : { Hkv: x.Hkv }),
    ...(x.softCap === undefined ? {} : { softCap: x.softCap }),
    ...(x.alibi === true ? { alibi: slopes(H) } : {}),
    ...(x.qStart === undefined ? {} : { qStart: x.qStart }),
  };
}

/** compareAttention with k/v Hkv heads wide, checking that the SIMD kernels ran (no fallback). */
function compare(
  dims: AttentionDims,
  mask: MaskView | null,
  keep: Uint8Array | null,
  dropP: number,
  seed: number,
  lengths: { qLen?: number; kvLen?: number } = {},
): void {
  const kvLen = lengths.kvLen ?? dims.B * dims.S * (dims.Hkv ?? dims.H) * dims.D;
  compareAttention(wasm, ref, TOL, dims, mask, keep, dropP, seed, { ...lengths, kvLen }, (run) => {
    const before = wasm.jobStats();
    const got = run();
    const after = wasm.jobStats();
    // Forward and backward each ran one kernel job (the reference fallback runs none).
    expect(after.parallel + after.single - before.parallel - before.single).toBe(2);
    return got;
  });
}

/** Drawn keep mask [B,H,T,S]. */
function keepOf(dims: AttentionDims, p: number, seed: number): Uint8Array {
  const keep = new Uint8Array(dims.B * dims.H * dims.T * dims.S);
  drawKeepMask(keep, keep.length, p, new Rng(seed));
  return keep;
}

const OPTIONS: ReadonlyArray<readonly [string, number, Extra]> = [
  ['GQA H/Hkv = 2', 4, { Hkv: 2 }],
  ['MQA Hkv = 1', 3, { Hkv: 1 }],
  ['soft-cap 1.3', 2, { softCap: 1.3 }],
  ['ALiBi', 4, { alibi: true }],
  ['GQA + soft-cap + ALiBi', 6, { Hkv: 2, softCap: 2.5, alibi: true }],
];

// name, B, T, S, D: head sizes and lengths off the vector width, and whole vectors.
const SHAPES: ReadonlyArray<readonly [string, number, number, number, number]> = [
  ['D = 5, T = S = 7', 2, 7, 7, 5],
  ['D = 16, T = S = 13', 3, 13, 13, 16],
  ['D = 8, S ≠ T (cross shape 6 × 11)', 2, 6, 11, 8],
];

for (const [label, fma] of WASM_BUILDS) {
  describe(`wasm attention options — ${label}`, () => {
    beforeAll(() => {
      wasm = createWasmBackend({ fma }) as WasmBackend;
    });

    for (const [name, H, x] of OPTIONS) {
      it.each(SHAPES)(
        `${name}, %s: matches the reference without a mask and with padding + dropout`,
        (_n, B, T, S, D) => {
          const dims = dimsOf(B, T, S, H, D, x);
          compare(dims, null, null, 0, 300 + S);
          const lens = Array.from({ length: B }, (_, b) => Math.max(1, S - 3 * b));
          compare(dims, paddingMask(lens, S), keepOf(dims, 0.25, 1), 0.25, 310 + S);
        },
      );

      it(`${name}: matches the reference under causal and combined masks (fully masked rows too)`, () => {
        const [B, T, D] = [3, 10, 12];
        const dims = dimsOf(B, T, T, H, D, x);
        compare(dims, causalMask(T), null, 0, 320);
        compare(dims, combinedMask([10, 0, 4], T), keepOf(dims, 0.2, 2), 0.2, 321);
      });
    }

    it('decodes step by step from a key/value cache: T = 1 with qStart = position, batch stride of maxS rows', () => {
      const [B, H, Hkv, D, maxS] = [2, 4, 2, 6, 9];
      const kvC = Hkv * D;
      for (const pos of [0, 3, 8]) {
        const step: AttentionDims = {
          ...dimsOf(B, 1, pos + 1, H, D, { Hkv, softCap: 4, alibi: true, qStart: pos }),
          kvBatchStride: maxS * kvC,
        };
        compare(step, null, null, 0, 330 + pos, { kvLen: B * maxS * kvC });
        // A prefill continuing the cache: query rows pos.. of a chunk of 3, causal by position.
        const T = 3;
        const S = pos + T;
        if (S > maxS) continue;
        const data = new Uint8Array(T * S);
        for (let t = 0; t < T; t++) data.fill(1, t * S, t * S + pos + t + 1);
        const prefill: AttentionDims = {
          ...dimsOf(B, T, S, H, D, { Hkv, softCap: 4, alibi: true, qStart: pos }),
          kvBatchStride: maxS * kvC,
        };
        compare(prefill, { data, batchStride: 0, rowStride: S }, null, 0, 340 + pos, { kvLen: B * maxS * kvC });
      }
    });

    it('reads k/v shared by every batch item (batch stride 0) with grouped-query heads', () => {
      const [B, T, S, H, Hkv, D] = [3, 5, 7, 4, 2, 6];
      const dims: AttentionDims = { ...dimsOf(B, T, S, H, D, { Hkv, softCap: 2, alibi: true }), kvBatchStride: 0 };
      compare(dims, paddingMask([7, 4, 1], S), null, 0, 345, { kvLen: S * Hkv * D });
    });

    it('a decoding step equals the matching row of the full causal call (GQA, soft-cap, ALiBi)', () => {
      const [H, Hkv, D, S] = [4, 1, 8, 11];
      const full = dimsOf(1, S, S, H, D, { Hkv, softCap: 3, alibi: true });
      const rng = new Rng(350);
      const q = randn(rng, S * H * D),
        k = randn(rng, S * Hkv * D),
        v = randn(rng, S * Hkv * D);
      const all = runAttention(wasm, q, k, v, full, causalMask(S), null, 0, null);
      const t = 9;
      const step: AttentionDims = { ...full, T: 1, S: t + 1, qBatchStride: H * D, qStart: t };
      const one = runAttention(wasm, q.slice(t * H * D, (t + 1) * H * D), k, v, step, null, null, 0, null);
      for (let i = 0; i < H * D; i++) {
        expect(Math.abs((one.out[i] as number) - (all.out[t * H * D + i] as number))).toBeLessThan(1e-5);
      }
    });

    it('keys no row attends below attended ones: NaN there changes nothing and gets no gradient (GQA, soft-cap)', () => {
      // Left padding: keys < pad[b] are never attended; with a soft-cap backward recomputes
      // scores from the keys, so a NaN read there would poison dz.
      const [B, T, H, Hkv, D] = [2, 9, 4, 2, 8];
      const pad = [3, 0];
      const data = new Uint8Array(B * T * T);
      pad.forEach((p, b) => {
        for (let t = 0; t < T; t++) for (let s = p; s <= t; s++) data[(b * T + t) * T + s] = 1;
      });
      const mask: MaskView = { data, batchStride: T * T, rowStride: T };
      const dims = dimsOf(B, T, T, H, D, { Hkv, softCap: 2, alibi: true });
      const kvC = Hkv * D;
      const rng = new Rng(360);
      const q = randn(rng, B * T * H * D),
        k = randn(rng, B * T * kvC),
        v = randn(rng, B * T * kvC),
        dout = randn(rng, B * T * H * D);
      const base = runAttention(wasm, q, k, v, dims, mask, null, 0, dout);
      const k2 = Float64Array.from(k),
        v2 = Float64Array.from(v);
      for (let s = 0; s < pad[0]!; s++) for (let c = 0; c < kvC; c++) k2[s * kvC + c] = v2[s * kvC + c] = NaN;
      const changed = runAttention(wasm, q, k2, v2, dims, mask, null, 0, dout);
      for (const key of ['out', 'probs', 'dq', 'dk', 'dv'] as const) {
        expect(Array.from(changed[key]), key).toEqual(Array.from(base[key]));
      }
      for (let i = 0; i < pad[0]! * kvC; i++) expect(changed.dk[i]).toBe(0);
      compare(dims, mask, null, 0, 361);
    });

    it('with explicit default fields gives exactly the plain call', () => {
      const dims = dimsOf(2, 7, 7, 2, 8, {});
      const rng = new Rng(370);
      const [q, k, v, r] = [0, 1, 2, 3].map(() => randn(rng, 2 * 7 * 16));
      const a = runAttention(wasm, q!, k!, v!, dims, causalMask(7), null, 0, r!);
      const b = runAttention(
        wasm,
        q!,
        k!,
        v!,
        { ...dims, Hkv: 2, softCap: 0, alibi: null, qStart: 0 },
        causalMask(7),
        null,
        0,
        r!,
      );
      for (const key of ['out', 'probs', 'dq', 'dk', 'dv'] as const)
        expect(Array.from(b[key])).toEqual(Array.from(a[key]));
    });

    it('takes ALiBi slopes from the heap or from a plain array alike', () => {
      const H = 4;
      const inHeap = wasm.alloc(H);
      inHeap.set(slopes(H));
      const base = dimsOf(1, 5, 5, H, 4, { Hkv: 2 });
      const rng = new Rng(380);
      const q = randn(rng, 5 * H * 4),
        k = randn(rng, 5 * 2 * 4),
        v = randn(rng, 5 * 2 * 4);
      const own = runAttention(wasm, q, k, v, { ...base, alibi: inHeap }, causalMask(5), null, 0, null);
      const plain = runAttention(
        wasm,
        q,
        k,
        v,
        { ...base, alibi: Float64Array.from(slopes(H)) },
        causalMask(5),
        null,
        0,
        null,
      );
      expect(Array.from(plain.out)).toEqual(Array.from(own.out));
      const none = runAttention(wasm, q, k, v, base, causalMask(5), null, 0, null);
      expect(Array.from(none.out)).not.toEqual(Array.from(own.out));
    });

    it('refuses a kv head count that does not divide H (the reference error)', () => {
      const dims = dimsOf(1, 2, 2, 4, 4, { Hkv: 3 });
      const be: Backend = wasm;
      expect(() =>
        runAttention(be, new Float64Array(32), new Float64Array(24), new Float64Array(24), dims, null, null, 0, null),
      ).toThrow(/divides 4/);
    });
  });
}
