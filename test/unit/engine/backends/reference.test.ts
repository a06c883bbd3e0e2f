import { describe, expect, it } from 'vitest';
import type { Backend, Kernels } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';

/** Every kernel name; `satisfies` makes this fail to compile if the interface grows. */
const KERNELS = {
  fill: true,
  scale: true,
  add: true,
  sumSquares: true,
  matmul: true,
  addBias: true,
  biasBackward: true,
  embeddingForward: true,
  embeddingBackward: true,
  positionalForward: true,
  positionalBackward: true,
  layernormForward: true,
  layernormBackward: true,
  rmsnormForward: true,
  rmsnormBackward: true,
  rope: true,
  reluForward: true,
  reluBackward: true,
  geluForward: true,
  geluBackward: true,
  geluTanhForward: true,
  geluTanhBackward: true,
  siluForward: true,
  siluBackward: true,
  relu2Forward: true,
  relu2Backward: true,
  mul: true,
  softcapForward: true,
  softcapBackward: true,
  dropoutMask: true,
  dropoutForward: true,
  dropoutBackward: true,
  softmaxForward: true,
  softmaxBackward: true,
  attentionForward: true,
  attentionBackward: true,
  crossEntropyForward: true,
  crossEntropyBackward: true,
  adamStep: true,
} as const satisfies Record<keyof Kernels, true>;

/**
 * A tiny language-model step through most kernels: embed → positions → layernorm →
 * causal self-attention (q = k = v = x) → matmul to logits → cross-entropy, then the
 * backward chain back to the embedding table. Returns the loss and the table gradient.
 */
function tinyStep(be: Backend, seed: number, tableOverride?: ArrayLike<number>): { loss: number; dTable: number[] } {
  const [B, T, C, H, V] = [2, 3, 4, 2, 5];
  const N = B * T;
  const rng = new Rng(seed);
  const fillRandom = (n: number): ReturnType<Backend['alloc']> => {
    const a = be.alloc(n);
    for (let i = 0; i < n; i++) a[i] = Math.fround(rng.normal() * 0.5);
    return a;
  };
  const table = fillRandom(V * C);
  if (tableOverride !== undefined) for (let i = 0; i < V * C; i++) table[i] = tableOverride[i] as number;
  const pe = fillRandom(T * C);
  const w = fillRandom(C);
  const wOut = fillRandom(V * C);
  const ids = Int32Array.from([1, 2, 3, 4, 0, 1]);
  const targets = Int32Array.from([2, 3, 4, 0, 1, -1]);
  const causal = new Uint8Array(T * T);
  for (let t = 0; t < T; t++) causal.fill(1, t * T, t * T + t + 1);
  const mask = { data: causal, batchStride: 0, rowStride: T };
  const dims = { B, T, S: T, H, D: C / H, qBatchStride: T * C, kvBatchStride: T * C, scale: 1 / Math.sqrt(C / H) };

  const x = be.alloc(N * C);
  const ln = be.alloc(N * C);
  const mean = be.alloc(N);
  const rstd = be.alloc(N);
  const att = be.alloc(N * C);
  const probs = be.alloc(B * H * T * T);
  const logits = be.alloc(N * V);
  const lse = be.alloc(N);
  be.embeddingForward(x, ids, table, N, C, Math.sqrt(C));
  be.positionalForward(x, pe, B, T, C, 0);
  be.layernormForward(ln, mean, rstd, x, w, null, N, C, 1e-5);
  be.attentionForward(att, probs, ln, ln, ln, dims, mask, null, 0);
  be.matmul(logits, att, wOut, N, V, C, false, true, false);
  const { sum, count } = be.crossEntropyForward(lse, logits, targets, N, V, -1, 0.1);

  const dLogits = be.alloc(N * V);
  be.crossEntropyBackward(dLogits, logits, lse, targets, N, V, -1, 0.1, 1 / count);
  const dAtt = be.alloc(N * C);
  be.matmul(dAtt, dLogits, wOut, N, C, V, false, false, true);
  const dLn = be.alloc(N * C);
  be.attentionBackward(dLn, dLn, dLn, dAtt, probs, ln, ln, ln, dims, null, 0); // one buffer: q, k, v share ln
  const dx = be.alloc(N * C);
  be.layernormBackward(dx, be.alloc(C), null, dLn, x, mean, rstd, w, N, C);
  const dTable = be.alloc(V * C);
  be.embeddingBackward(dTable, dx, ids, N, C, Math.sqrt(C), -1);
  return { loss: sum / count, dTable: Array.from(dTable) };
}

describe('createReferenceBackend', () => {
  it('names and allocates by dtype: zeroed Float32Array by default, Float64Array for f64', () => {
    const f32 = createReferenceBackend();
    const f64 = createReferenceBackend({ dtype: 'f64' });
    expect(f32.name).toBe('reference');
    expect(createReferenceBackend({ dtype: 'f32' }).name).toBe('reference');
    expect(f64.name).toBe('reference-f64');
    const a = f32.alloc(7);
    const b = f64.alloc(7);
    expect(a).toBeInstanceOf(Float32Array);
    expect(b).toBeInstanceOf(Float64Array);
    expect(a.length).toBe(7);
    expect(Array.from(b)).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it('implements every kernel of the interface', () => {
    const be = createReferenceBackend();
    for (const name of Object.keys(KERNELS) as (keyof Kernels)[]) expect(typeof be[name], name).toBe('function');
  });

  it('is deterministic: the same step twice gives bit-identical losses and gradients', () => {
    const a = tinyStep(createReferenceBackend(), 5);
    const b = tinyStep(createReferenceBackend(), 5);
    expect(b.loss).toBe(a.loss);
    expect(b.dTable).toEqual(a.dTable);
    expect(Number.isFinite(a.loss)).toBe(true);
    expect(a.dTable.some((g) => g !== 0)).toBe(true);
  });

  it('f32 and f64 agree on a small forward/backward chain to float32 accuracy', () => {
    const a = tinyStep(createReferenceBackend(), 6);
    const b = tinyStep(createReferenceBackend({ dtype: 'f64' }), 6);
    expect(Math.abs(a.loss - b.loss)).toBeLessThan(1e-5 * Math.abs(b.loss));
    a.dTable.forEach((g, i) => expect(Math.abs(g - (b.dTable[i] as number)), `dTable[${i}]`).toBeLessThan(1e-4));
  });

  it('the chained backward (q = k = v sharing one gradient buffer) matches finite differences', () => {
    const f64 = createReferenceBackend({ dtype: 'f64' });
    const base = tinyStep(f64, 9);
    const table = Float64Array.from(new Float64Array(20), (_, i) => Math.fround(Math.sin(i + 1) * 0.5));
    const analytic = Float64Array.from(tinyStep(f64, 9, table).dTable);
    expect(base.dTable).not.toEqual(Array.from(analytic)); // the override took effect
    const r = gradCheck(() => tinyStep(f64, 9, table).loss, table, analytic, { rtol: 1e-6, atol: 1e-9 });
    expect(r.ok, r.message).toBe(true);
  });

  it('instances are independent: interleaved use gives the same results as separate use', () => {
    const one = createReferenceBackend();
    const two = createReferenceBackend();
    const alone = tinyStep(createReferenceBackend(), 7);
    tinyStep(two, 8);
    const interleaved = tinyStep(one, 7);
    expect(interleaved.dTable).toEqual(alone.dTable);
  });
});
