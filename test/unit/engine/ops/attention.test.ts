import { describe, expect, it } from 'vitest';
import { drawKeepMask } from '../../../../src/engine/ops/dropout';
import type { AttentionDims, MaskView } from '../../../../src/engine/backend';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import {
  allowed,
  causalMask,
  combinedMask,
  compactDims,
  naiveAttention,
  paddingMask,
  runAttention,
} from './attentionFixtures';
import { backendCases, expectAllFinite, expectClose, expectGradOk, oracle, randn, weightedSum } from './opTestUtils';

// B = 2, T = S = 4, H = 2, D = 3: small, but two batch items and two heads so batch and
// head offsets are both exercised.
const [B, T, H, D] = [2, 4, 2, 3];
const C = H * D;
const LENS = [4, 2] as const; // batch 1 has two padding keys

/** Row sums of probs [B,H,T,S] must be 1 where the row has an allowed key, else 0. */
function expectRowSums(probs: ArrayLike<number>, dims: AttentionDims, mask: MaskView | null): void {
  for (let b = 0; b < dims.B; b++) {
    for (let h = 0; h < dims.H; h++) {
      for (let t = 0; t < dims.T; t++) {
        const off = ((b * dims.H + h) * dims.T + t) * dims.S;
        let sum = 0;
        let any = false;
        for (let s = 0; s < dims.S; s++) {
          const ok = allowed(mask, b, t, s);
          any ||= ok;
          if (!ok) expect(probs[off + s], `masked prob (${b},${h},${t},${s})`).toBe(0);
          sum += probs[off + s] as number;
        }
        expect(Math.abs(sum - (any ? 1 : 0)), `row (${b},${h},${t}) sum`).toBeLessThan(1e-5);
      }
    }
  }
}

describe.each(backendCases())('attention ($label)', ({ backend, tol, grad }) => {
  const masks: Record<string, MaskView | null> = {
    none: null,
    'padding [B,1,1,S]': paddingMask(LENS, T),
    'causal [1,1,T,T]': causalMask(T),
    'combined [B,1,T,T]': combinedMask([4, 0], T), // batch 1 fully masked: rows of zeros
  };

  it('matches a hand-checkable single head: equal scores average the values', () => {
    // q = 0 ⇒ all scores equal ⇒ p = 1/S; out = mean of v rows.
    const dims = compactDims(1, 1, 2, 1, 2);
    const run = runAttention(backend, [0, 0], [1, 2, 3, 4], [1, 10, 3, 30], dims, null, null, 0, null);
    expectClose(run.probs, [0.5, 0.5], tol);
    expectClose(run.out, [2, 20], tol);
  });

  it.each(Object.keys(masks))('matches per-head matmul + softmax attention (mask: %s)', (name) => {
    const mask = masks[name] ?? null;
    const rng = new Rng(101);
    const dims = compactDims(B, T, T, H, D);
    const q = randn(rng, B * T * C);
    const k = randn(rng, B * T * C);
    const v = randn(rng, B * T * C);
    const run = runAttention(backend, q, k, v, dims, mask, null, 0, null);
    const ref = naiveAttention(q, k, v, dims, mask, null, 0);
    expectClose(run.probs, ref.probs, tol, 'probs');
    expectClose(run.out, ref.out, tol, 'out');
    expectRowSums(run.probs, dims, mask);
  });

  it('supports cross-attention shapes (S ≠ T) with a padding mask', () => {
    const rng = new Rng(102);
    const [Tq, S] = [3, 5];
    const dims = compactDims(B, Tq, S, H, D);
    const mask = paddingMask([5, 3], S);
    const q = randn(rng, B * Tq * C);
    const k = randn(rng, B * S * C);
    const v = randn(rng, B * S * C);
    const run = runAttention(backend, q, k, v, dims, mask, null, 0, null);
    const ref = naiveAttention(q, k, v, dims, mask, null, 0);
    expectClose(run.out, ref.out, tol);
    expectRowSums(run.probs, dims, mask);
  });

  it('gives a fully masked query row zero probabilities and zero output, never NaN', () => {
    const rng = new Rng(103);
    const dims = compactDims(B, T, T, H, D);
    const run = runAttention(
      backend,
      randn(rng, B * T * C),
      randn(rng, B * T * C),
      randn(rng, B * T * C),
      dims,
      masks['combined [B,1,T,T]'] ?? null,
      null,
      0,
      randn(rng, B * T * C),
    );
    expectAllFinite(run.out);
    expectAllFinite(run.dq);
    for (let i = T * C; i < 2 * T * C; i++) expect(run.out[i]).toBe(0);
    for (let i = T * C; i < 2 * T * C; i++) expect(run.dq[i]).toBe(0);
  });

  it('stays finite for very large scores', () => {
    const rng = new Rng(104);
    const dims = compactDims(1, T, T, H, D);
    const q = randn(rng, T * C, 300); // scores ~ 1e4–1e5
    const run = runAttention(
      backend,
      q,
      randn(rng, T * C, 30),
      randn(rng, T * C),
      dims,
      causalMask(T),
      null,
      0,
      randn(rng, T * C),
    );
    expectAllFinite(run.out, undefined, 'out');
    expectAllFinite(run.probs, undefined, 'probs');
    expectAllFinite(run.dq, undefined, 'dq');
    expectRowSums(run.probs, dims, causalMask(T));
  });

  it('reads k/v through a batch stride larger than S·C (key/value cache), and q/out through their own', () => {
    const rng = new Rng(105);
    const [Tq, S, maxS, qStride] = [2, 3, 6, 3 * C];
    const compact = compactDims(B, Tq, S, H, D);
    const strided: AttentionDims = { ...compact, qBatchStride: qStride, kvBatchStride: maxS * C };
    const q = randn(rng, B * Tq * C);
    const k = randn(rng, B * S * C);
    const v = randn(rng, B * S * C);
    const dout = randn(rng, B * Tq * C);
    // Scatter into the strided layouts; the gaps hold NaN, which must never be read.
    const qs = new Float64Array(B * qStride).fill(NaN);
    const ks = new Float64Array(B * maxS * C).fill(NaN);
    const vs = new Float64Array(B * maxS * C).fill(NaN);
    const ds = new Float64Array(B * qStride).fill(NaN);
    for (let b = 0; b < B; b++) {
      qs.set(q.subarray(b * Tq * C, (b + 1) * Tq * C), b * qStride);
      ds.set(dout.subarray(b * Tq * C, (b + 1) * Tq * C), b * qStride);
      ks.set(k.subarray(b * S * C, (b + 1) * S * C), b * maxS * C);
      vs.set(v.subarray(b * S * C, (b + 1) * S * C), b * maxS * C);
    }
    const mask = paddingMask([3, 2], S);
    const a = runAttention(backend, q, k, v, compact, mask, null, 0, dout);
    const s = runAttention(backend, qs, ks, vs, strided, mask, null, 0, ds);
    for (let b = 0; b < B; b++) {
      const at = (x: ArrayLike<number>, off: number, n: number): number[] =>
        Array.from({ length: n }, (_, i) => x[off + i] as number);
      expect(at(s.out, b * qStride, Tq * C)).toEqual(at(a.out, b * Tq * C, Tq * C));
      expect(at(s.dq, b * qStride, Tq * C)).toEqual(at(a.dq, b * Tq * C, Tq * C));
      expect(at(s.dk, b * maxS * C, S * C)).toEqual(at(a.dk, b * S * C, S * C));
      expect(at(s.dv, b * maxS * C, S * C)).toEqual(at(a.dv, b * S * C, S * C));
      // Nothing is written into the cache rows past S.
      expect(at(s.dk, b * maxS * C + S * C, (maxS - S) * C).every((x) => x === 0)).toBe(true);
    }
    expect(Array.from(s.probs)).toEqual(Array.from(a.probs));
  });

  it('does not leak: NaN k/v at padded key positions change nothing', () => {
    const rng = new Rng(106);
    const dims = compactDims(B, T, T, H, D);
    const mask = paddingMask(LENS, T);
    const q = randn(rng, B * T * C);
    const k = randn(rng, B * T * C);
    const v = randn(rng, B * T * C);
    const dout = randn(rng, B * T * C);
    const base = runAttention(backend, q, k, v, dims, mask, null, 0, dout);
    const k2 = Float64Array.from(k);
    const v2 = Float64Array.from(v);
    // Batch 1, key positions 2 and 3 are padding. NaN poisons anything that reads it
    // (even 0 · NaN), so equality below proves those rows are never read.
    for (let s = 2; s < 4; s++) {
      for (let c = 0; c < C; c++) {
        k2[(T + s) * C + c] = NaN;
        v2[(T + s) * C + c] = NaN;
      }
    }
    const changed = runAttention(backend, q, k2, v2, dims, mask, null, 0, dout);
    expect(Array.from(changed.out)).toEqual(Array.from(base.out));
    expect(Array.from(changed.probs)).toEqual(Array.from(base.probs));
    expect(Array.from(changed.dq)).toEqual(Array.from(base.dq));
    for (let s = 2; s < 4; s++) {
      for (let c = 0; c < C; c++) {
        expect(changed.dk[(T + s) * C + c]).toBe(0);
        expect(changed.dv[(T + s) * C + c]).toBe(0);
      }
    }
  });

  it('does not leak: changing q/k/v at a future position never changes earlier outputs (causal)', () => {
    const rng = new Rng(107);
    const dims = compactDims(B, T, T, H, D);
    const mask = causalMask(T);
    const q = randn(rng, B * T * C);
    const k = randn(rng, B * T * C);
    const v = randn(rng, B * T * C);
    const base = runAttention(backend, q, k, v, dims, mask, null, 0, null);
    for (let future = 1; future < T; future++) {
      const [q2, k2, v2] = [q, k, v].map((x) => Float64Array.from(x)) as [Float64Array, Float64Array, Float64Array];
      for (let b = 0; b < B; b++) {
        for (let c = 0; c < C; c++) {
          const i = (b * T + future) * C + c;
          q2[i] = 5;
          k2[i] = -7;
          v2[i] = 1e6;
        }
      }
      const changed = runAttention(backend, q2, k2, v2, dims, mask, null, 0, null);
      for (let b = 0; b < B; b++) {
        for (let i = 0; i < future * C; i++) expect(changed.out[b * T * C + i]).toBe(base.out[b * T * C + i]);
      }
    }
  });

  it('applies a dropout keep mask to the values but saves pre-dropout probabilities', () => {
    const rng = new Rng(108);
    const dims = compactDims(B, T, T, H, D);
    const p = 0.3;
    const keep = new Uint8Array(B * H * T * T);
    drawKeepMask(keep, keep.length, p, new Rng(9));
    const q = randn(rng, B * T * C);
    const k = randn(rng, B * T * C);
    const v = randn(rng, B * T * C);
    const mask = causalMask(T);
    const run = runAttention(backend, q, k, v, dims, mask, keep, p, null);
    const ref = naiveAttention(q, k, v, dims, mask, keep, p);
    expectClose(run.out, ref.out, tol, 'out');
    expectClose(run.probs, naiveAttention(q, k, v, dims, mask, null, 0).probs, tol, 'probs');
    // The mask must matter, or this test could not fail.
    const noDrop = naiveAttention(q, k, v, dims, mask, null, 0).out;
    expect(ref.out.some((x, i) => Math.abs(x - (noDrop[i] as number)) > 1e-3)).toBe(true);
  });

  const gradCases: ReadonlyArray<readonly [string, MaskView | null, number]> = [
    ['no mask', null, 0],
    ['combined mask with a fully masked row', combinedMask([4, 2], T), 0],
    ['padding mask + dropout keep mask', paddingMask(LENS, T), 0.25],
  ];

  it.each(gradCases)('backward matches finite differences for q, k, v (%s) and accumulates', (_name, mask, p) => {
    const rng = new Rng(109);
    const dims = compactDims(B, T, T, H, D);
    const q = randn(rng, B * T * C);
    const k = randn(rng, B * T * C);
    const v = randn(rng, B * T * C);
    const r = randn(rng, B * T * C);
    let keep: Uint8Array | null = null;
    if (p > 0) {
      keep = new Uint8Array(B * H * T * T);
      drawKeepMask(keep, keep.length, p, new Rng(10));
    }
    const run = runAttention(backend, q, k, v, dims, mask, keep, p, r);
    const ref = oracle();
    const out = new Float64Array(B * T * C);
    const probs = new Float64Array(B * H * T * T);
    const f = (): number => {
      ref.attentionForward(out, probs, q, k, v, dims, mask, keep, p);
      return weightedSum(out, r);
    };
    expectGradOk(gradCheck(f, q, run.dq, grad));
    expectGradOk(gradCheck(f, k, run.dk, grad));
    expectGradOk(gradCheck(f, v, run.dv, grad));

    const once = [Array.from(run.dq), Array.from(run.dk), Array.from(run.dv)] as const;
    const bq = backend.alloc(q.length);
    const bk = backend.alloc(k.length);
    const bv = backend.alloc(v.length);
    const br = backend.alloc(r.length);
    bq.set(q);
    bk.set(k);
    bv.set(v);
    br.set(r);
    backend.attentionBackward(run.dq, run.dk, run.dv, br, run.probs, bq, bk, bv, dims, keep, p);
    expectClose(
      run.dq,
      once[0].map((x) => 2 * x),
      tol,
      'dq twice',
    );
    expectClose(
      run.dk,
      once[1].map((x) => 2 * x),
      tol,
      'dk twice',
    );
    expectClose(
      run.dv,
      once[2].map((x) => 2 * x),
      tol,
      'dv twice',
    );
  });
});
