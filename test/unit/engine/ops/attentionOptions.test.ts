/**
 * The optional fields of fused attention (AttentionDims.Hkv, softCap, alibi, qStart) on
 * every backend: values against a naive per-(b, h, t, s) computation written here in
 * float64, grouped-query attention against multi-head attention on repeated k/v heads,
 * a KV-cache step (T = 1, qStart > 0) against the last row of the full causal call,
 * finite-difference gradients of q, k, v for each field, and the checks of the fields.
 */
import { describe, expect, it } from 'vitest';
import type { AttentionDims, MaskView } from '../../../../src/engine/backend';
import { EngineError } from '../../../../src/engine/errors';
import { drawKeepMask } from '../../../../src/engine/ops/dropout';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { allowed, causalMask, combinedMask, paddingMask, runAttention } from './attentionFixtures';
import { backendCases, expectClose, expectGradOk, oracle, randn, weightedSum } from './opTestUtils';

/** Options of one case: the new fields, left out where undefined. */
interface Extra {
  readonly Hkv?: number;
  readonly softCap?: number;
  readonly alibi?: boolean;
  readonly qStart?: number;
}

/** ALiBi slopes of the paper for H a power of two: 2^(−8(h+1)/H). */
function slopes(H: number): Float64Array {
  return Float64Array.from({ length: H }, (_, h) => Math.pow(2, (-8 * (h + 1)) / H));
}

/** Compact dims (k/v rows Hkv·D wide) with the given optional fields. */
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

/**
 * Attention the long way, one (b, h, t) at a time in float64, straight from the formulas:
 * g = floor(h / (H/Hkv)); z = scale·q·k_g; z = c·tanh(z/c); z += slope·(s − (qStart + t));
 * masked softmax (masked → 0; all masked → zeros); out = Σ p·keep/(1−p)·v_g.
 */
function naive(
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  dims: AttentionDims,
  mask: MaskView | null,
  keep: Uint8Array | null,
  dropP: number,
): { out: Float64Array; probs: Float64Array } {
  const { B, T, S, H, D, scale } = dims;
  const Hkv = dims.Hkv ?? H;
  const cap = dims.softCap ?? 0;
  const qStart = dims.qStart ?? 0;
  const out = new Float64Array(B * T * H * D);
  const probs = new Float64Array(B * H * T * S);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / (H / Hkv));
      for (let t = 0; t < T; t++) {
        const z: number[] = [];
        for (let s = 0; s < S; s++) {
          if (!allowed(mask, b, t, s)) {
            z.push(-Infinity);
            continue;
          }
          let x = 0;
          for (let d = 0; d < D; d++) {
            x += (q[((b * T + t) * H + h) * D + d] as number) * (k[((b * S + s) * Hkv + g) * D + d] as number);
          }
          x *= scale;
          if (cap > 0) x = cap * Math.tanh(x / cap);
          if (dims.alibi) x += (dims.alibi[h] as number) * (s - (qStart + t));
          z.push(x);
        }
        const m = Math.max(...z);
        const e = z.map((x) => (m === -Infinity ? 0 : Math.exp(x - m)));
        const sum = e.reduce((a, x) => a + x, 0);
        for (let s = 0; s < S; s++) {
          const i = ((b * H + h) * T + t) * S + s;
          const p = sum === 0 ? 0 : (e[s] as number) / sum;
          probs[i] = p;
          const w = keep === null ? p : keep[i] === 1 ? p / (1 - dropP) : 0;
          for (let d = 0; d < D; d++) {
            out[((b * T + t) * H + h) * D + d] += w * (v[((b * S + s) * Hkv + g) * D + d] as number);
          }
        }
      }
    }
  }
  return { out, probs };
}

const [B, T, D] = [2, 5, 3];

/** Named cases: heads, the new fields, the mask, the dropout rate. */
const CASES: ReadonlyArray<readonly [string, number, Extra, MaskView | null, number]> = [
  ['GQA H=4, Hkv=2, causal', 4, { Hkv: 2 }, causalMask(T), 0],
  ['MQA H=4, Hkv=1, padding + dropout', 4, { Hkv: 1 }, paddingMask([5, 3], T), 0.25],
  ['soft-cap 1.5, combined mask', 2, { softCap: 1.5 }, combinedMask([5, 2], T), 0],
  ['ALiBi, causal + dropout', 4, { alibi: true }, causalMask(T), 0.2],
  [
    'all: Hkv=2, cap 2, ALiBi, combined mask + dropout',
    4,
    { Hkv: 2, softCap: 2, alibi: true },
    combinedMask([4, 5], T),
    0.2,
  ],
];

/** Seeded q, k, v, upstream gradient (k/v Hkv heads wide) and keep mask for a case. */
function inputs(dims: AttentionDims, dropP: number, seed: number, std = 1.5) {
  const rng = new Rng(seed);
  const Hkv = dims.Hkv ?? dims.H;
  const q = randn(rng, dims.B * dims.T * dims.H * dims.D, std);
  const k = randn(rng, dims.B * dims.S * Hkv * dims.D, std);
  const v = randn(rng, dims.B * dims.S * Hkv * dims.D);
  const r = randn(rng, dims.B * dims.T * dims.H * dims.D);
  let keep: Uint8Array | null = null;
  if (dropP > 0) {
    keep = new Uint8Array(dims.B * dims.H * dims.T * dims.S);
    drawKeepMask(keep, keep.length, dropP, new Rng(seed + 1));
  }
  return { q, k, v, r, keep };
}

describe.each(backendCases())('attention options ($label)', ({ backend, tol, grad }) => {
  it.each(CASES)('%s: matches the naive per-head computation', (_name, H, x, mask, dropP) => {
    const dims = dimsOf(B, T, T, H, D, x);
    const { q, k, v, keep } = inputs(dims, dropP, 201);
    const run = runAttention(backend, q, k, v, dims, mask, keep, dropP, null);
    const want = naive(q, k, v, dims, mask, keep, dropP);
    expectClose(run.probs, want.probs, tol, 'probs');
    expectClose(run.out, want.out, tol, 'out');
    // The fields must matter, or this test could not fail: without them the values differ.
    const plain = naive(q, k, v, { ...dims, softCap: 0, alibi: null }, mask, keep, dropP);
    if (x.softCap !== undefined || x.alibi === true) {
      expect(want.probs.some((p, i) => Math.abs(p - (plain.probs[i] as number)) > 1e-3)).toBe(true);
    }
  });

  it('soft-caps large scores: every score stays within ±cap', () => {
    // One query row, keys with huge scores: uncapped, p would be one-hot; capped at 1,
    // the scores lie in [−1, 1], so p_max / p_min ≤ e².
    const dims = dimsOf(1, 1, 4, 1, 2, { softCap: 1 });
    const q = Float64Array.from([10, 0]);
    const k = Float64Array.from([10, 0, -10, 0, 5, 0, 0, 0]);
    const v = new Float64Array(8);
    const run = runAttention(backend, q, k, v, dims, null, null, 0, null);
    const p = Array.from(run.probs);
    expect(Math.max(...p) / Math.min(...p)).toBeLessThanOrEqual(Math.exp(2) * (1 + 1e-5));
    expectClose(run.probs, naive(q, k, v, dims, null, null, 0).probs, tol, 'probs');
  });

  it('GQA equals multi-head attention on repeated k/v heads, with dk/dv summed over each group', () => {
    const [H, Hkv, S] = [6, 2, 4];
    const gqa = dimsOf(B, T, S, H, D, { Hkv });
    const mha = dimsOf(B, T, S, H, D, {});
    const { q, k, v, r } = inputs(gqa, 0, 202);
    const rep = (x: Float64Array): Float64Array => {
      const y = new Float64Array(B * S * H * D);
      for (let bs = 0; bs < B * S; bs++) {
        for (let h = 0; h < H; h++) {
          const g = Math.floor(h / (H / Hkv));
          for (let d = 0; d < D; d++) y[(bs * H + h) * D + d] = x[(bs * Hkv + g) * D + d] as number;
        }
      }
      return y;
    };
    const a = runAttention(backend, q, k, v, gqa, paddingMask([4, 3], S), null, 0, r);
    const m = runAttention(backend, q, rep(k), rep(v), mha, paddingMask([4, 3], S), null, 0, r);
    expectClose(a.out, m.out, tol, 'out');
    expectClose(a.probs, m.probs, tol, 'probs');
    expectClose(a.dq, m.dq, tol, 'dq');
    const sum = (dx: ArrayLike<number>): Float64Array => {
      const y = new Float64Array(B * S * Hkv * D);
      for (let bs = 0; bs < B * S; bs++) {
        for (let h = 0; h < H; h++) {
          const g = Math.floor(h / (H / Hkv));
          for (let d = 0; d < D; d++) y[(bs * Hkv + g) * D + d] += dx[(bs * H + h) * D + d] as number;
        }
      }
      return y;
    };
    expectClose(a.dk, sum(m.dk), tol, 'dk');
    expectClose(a.dv, sum(m.dv), tol, 'dv');
  });

  it('a KV-cache step (T = 1, qStart = S − 1) with ALiBi and GQA equals the last row of the full causal call', () => {
    const [H, Hkv, S] = [4, 2, 6];
    const full = dimsOf(1, S, S, H, D, { Hkv, alibi: true, softCap: 3 });
    const { q, k, v } = inputs(full, 0, 203);
    const all = runAttention(backend, q, k, v, full, causalMask(S), null, 0, null);
    for (const t of [0, 3, S - 1]) {
      // Keys 0..t are in the cache (a cache of S rows, batch stride S·Hkv·D); query row t only.
      const step: AttentionDims = { ...full, T: 1, S: t + 1, qBatchStride: H * D, qStart: t };
      const qt = q.slice(t * H * D, (t + 1) * H * D);
      const one = runAttention(backend, qt, k, v, step, null, null, 0, null);
      const want = Array.from({ length: H * D }, (_, i) => all.out[t * H * D + i] as number);
      expectClose(one.out, want, tol, `out at t=${t}`);
      for (let h = 0; h < H; h++) {
        const wantP = Array.from({ length: t + 1 }, (_, s) => all.probs[(h * S + t) * S + s] as number);
        expectClose(one.probs.subarray(h * (t + 1), (h + 1) * (t + 1)), wantP, tol, `probs h=${h} t=${t}`);
      }
    }
  });

  it('ALiBi with qStart > 0 on several query rows and S ≠ T matches the naive computation', () => {
    // A prefill continuing a cache: queries at positions 3..5 over keys 0..5 (causal by position).
    const [H, Tq, S, qStart] = [4, 3, 6, 3];
    const dims = dimsOf(B, Tq, S, H, D, { Hkv: 1, alibi: true, qStart });
    const data = new Uint8Array(Tq * S);
    for (let t = 0; t < Tq; t++) data.fill(1, t * S, t * S + qStart + t + 1);
    const mask: MaskView = { data, batchStride: 0, rowStride: S };
    const { q, k, v } = inputs(dims, 0, 204);
    const run = runAttention(backend, q, k, v, dims, mask, null, 0, null);
    const want = naive(q, k, v, dims, mask, null, 0);
    expectClose(run.probs, want.probs, tol, 'probs');
    expectClose(run.out, want.out, tol, 'out');
    // qStart moves every bias of a row by the same slope·qStart, and the softmax does not
    // see a per-row shift: the kernel's distances must agree with qStart 0 up to rounding.
    const shifted = naive(q, k, v, { ...dims, qStart: 0 }, mask, null, 0);
    expectClose(shifted.probs, want.probs, { rtol: 1e-9, atol: 1e-12 }, 'softmax is shift-invariant per row');
  });

  it('explicit defaults (Hkv = H, softCap 0, alibi null, qStart 0) give bit-identical results', () => {
    const dims = dimsOf(B, T, T, 2, D, {});
    const { q, k, v, r, keep } = inputs(dims, 0.2, 205);
    const mask = combinedMask([5, 3], T);
    const a = runAttention(backend, q, k, v, dims, mask, keep, 0.2, r);
    const e = runAttention(
      backend,
      q,
      k,
      v,
      { ...dims, Hkv: 2, softCap: 0, alibi: null, qStart: 0 },
      mask,
      keep,
      0.2,
      r,
    );
    for (const key of ['out', 'probs', 'dq', 'dk', 'dv'] as const)
      expect(Array.from(e[key])).toEqual(Array.from(a[key]));
  });

  it.each(CASES)('%s: backward matches finite differences for q, k, v', (_name, H, x, mask, dropP) => {
    const dims = dimsOf(B, T, T, H, D, x);
    const { q, k, v, r, keep } = inputs(dims, dropP, 206, 1);
    const run = runAttention(backend, q, k, v, dims, mask, keep, dropP, r);
    const ref = oracle();
    const out = new Float64Array(q.length);
    const probs = new Float64Array(B * H * T * T);
    const f = (): number => {
      ref.attentionForward(out, probs, q, k, v, dims, mask, keep, dropP);
      return weightedSum(out, r);
    };
    expectGradOk(gradCheck(f, q, run.dq, grad));
    expectGradOk(gradCheck(f, k, run.dk, grad));
    expectGradOk(gradCheck(f, v, run.dv, grad));
  });

  it('refuses a kv head count that does not divide H, too few slopes, and a negative cap', () => {
    const { q, k, v } = inputs(dimsOf(1, 2, 2, 4, D, {}), 0, 207);
    const bad: Extra[] = [{ Hkv: 3 }, { Hkv: 0 }, { softCap: -1 }];
    for (const x of bad) {
      expect(() => runAttention(backend, q, k, v, dimsOf(1, 2, 2, 4, D, x), null, null, 0, null)).toThrow(EngineError);
    }
    const few: AttentionDims = { ...dimsOf(1, 2, 2, 4, D, {}), alibi: slopes(2) };
    expect(() => runAttention(backend, q, k, v, few, null, null, 0, null)).toThrow(/slopes for 4 heads/);
  });
});
