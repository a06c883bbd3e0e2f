/**
 * Fused attention's optional fields on the WebAssembly backend with a helper thread: with
 * grouped-query heads several query heads add into one kv head's dk/dv, so backward splits
 * (batch, kv head) pairs over threads; the results must be bit-identical to one thread
 * (work above the parallel threshold, so the helpers really share it) and match the
 * float64 reference.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AttentionDims, MaskView } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { WasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { drawKeepMask } from '../../../../src/engine/ops/dropout';
import { Rng } from '../../../../src/engine/rng';
import { createWasmThreads } from '../../../../src/lab/platform/threads.node';
import { combinedMask, paddingMask, runAttention } from '../../engine/ops/attentionFixtures';
import { expectClose, randn } from '../../engine/ops/opTestUtils';

const [B, T, H, D] = [3, 40, 8, 16];

/** Dims of one case (k/v Hkv heads wide), ALiBi slopes as a model stores them. */
function dimsOf(Hkv: number, softCap: number, alibi: boolean): AttentionDims {
  return {
    B,
    T,
    S: T,
    H,
    D,
    qBatchStride: T * H * D,
    kvBatchStride: T * Hkv * D,
    scale: 1 / Math.sqrt(D),
    Hkv,
    softCap,
    alibi: alibi ? Float32Array.from({ length: H }, (_, h) => Math.pow(2, (-8 * (h + 1)) / H)) : null,
  };
}

const CASES: ReadonlyArray<readonly [string, number, number, boolean, MaskView, number]> = [
  ['GQA Hkv = 4, combined mask + dropout', 4, 0, false, combinedMask([40, 17, 3], T), 0.1],
  ['MQA Hkv = 1, padding mask', 1, 0, false, paddingMask([40, 9, 33], T), 0],
  ['Hkv = 2, soft-cap and ALiBi, combined mask + dropout', 2, 5, true, combinedMask([25, 40, 1], T), 0.1],
  ['Hkv = H, soft-cap, padding mask', H, 3, false, paddingMask([12, 40, 40], T), 0],
];

describe('wasm attention options with a helper thread', () => {
  const threads = createWasmThreads(1);
  const parallel = createWasmBackend({ runner: threads }) as WasmBackend;
  const alone = createWasmBackend() as WasmBackend;
  const ref = createReferenceBackend({ dtype: 'f64' });
  afterAll(() => parallel.dispose());

  it.each(CASES)('%s: bit-identical to one thread, close to the reference', async (_n, Hkv, cap, alibi, mask, p) => {
    await threads.whenReady();
    expect(parallel.threadsReady()).toBe(true);
    const dims = dimsOf(Hkv, cap, alibi);
    const rng = new Rng(500 + Hkv);
    const q = randn(rng, B * T * H * D),
      k = randn(rng, B * T * Hkv * D),
      v = randn(rng, B * T * Hkv * D),
      dout = randn(rng, B * T * H * D);
    let keep: Uint8Array | null = null;
    if (p > 0) {
      keep = new Uint8Array(B * H * T * T);
      drawKeepMask(keep, keep.length, p, new Rng(7));
    }
    const before = parallel.jobStats().parallel;
    const multi = runAttention(parallel, q, k, v, dims, mask, keep, p, dout);
    expect(parallel.jobStats().parallel - before).toBe(2); // forward and backward were shared
    const single = runAttention(alone, q, k, v, dims, mask, keep, p, dout);
    expect(alone.jobStats().parallel).toBe(0);
    for (const key of ['out', 'probs', 'dq', 'dk', 'dv'] as const) {
      const a = Array.from(single[key]),
        b = Array.from(multi[key]);
      expect(
        b.findIndex((x, i) => !Object.is(x, a[i])),
        `${key}: first element that differs`,
      ).toBe(-1);
    }
    const want = runAttention(ref, q, k, v, dims, mask, keep, p, dout);
    for (const key of ['out', 'probs', 'dq', 'dk', 'dv'] as const) {
      expectClose(multi[key], want[key], { rtol: 1e-5, atol: 1e-6 }, key);
    }
  });
});
