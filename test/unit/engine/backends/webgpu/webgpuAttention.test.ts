/**
 * The WebGPU fused attention forward and backward against the reference (ops/attention.ts), in
 * float32 to 1e-5 relative as webgpuKernels.test.ts measures it: multi-head and grouped-query,
 * causal + padding + window masks (a fully masked row), soft-cap with ALiBi, a dropout keep-mask,
 * and a key/value cache's batch stride with queries starting past 0. Skips, naming why, only where
 * no WebGPU adapter opens.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { AttentionDims, MaskView } from '../../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import { WebGpuKernels } from '../../../../../src/engine/backends/webgpu/webgpuKernels';
import { combinedView, fillCombinedMask } from '../../../../../src/engine/models/masks';
import { openNodeGpu } from '../../../../../src/lab/platform/webgpu.node';

const gpu = await openNodeGpu();
const ref = createReferenceBackend();

function rand(n: number, seed: number, s = 1): Float32Array {
  const out = new Float32Array(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x6d2b79f5) | 0;
    out[i] = ((x >>> 0) / 2 ** 32 - 0.5) * 2 * s;
  }
  return out;
}

function maxRelErr(got: Float32Array, want: Float32Array): number {
  let ss = 0;
  for (const v of want) ss += v * v;
  const rms = Math.sqrt(ss / Math.max(1, want.length));
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const e = Math.abs((got[i] as number) - (want[i] as number)) / Math.max(Math.abs(want[i] as number), rms, 1e-30);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

interface Case {
  readonly name: string;
  readonly dims: AttentionDims;
  readonly mask: 'none' | 'combined';
  readonly window?: number;
  readonly dropP?: number;
}

const cases: Case[] = [
  {
    name: 'multi-head, causal + padding (one row fully masked)',
    dims: { B: 2, T: 7, S: 7, H: 2, D: 8, qBatchStride: 7 * 16, kvBatchStride: 7 * 16, scale: 1 / Math.sqrt(8) },
    mask: 'combined',
  },
  {
    name: 'grouped-query (4 q / 2 kv heads), sliding window 3, D 70 (more than 64 threads)',
    dims: { B: 2, T: 9, S: 9, H: 4, D: 70, Hkv: 2, qBatchStride: 9 * 280, kvBatchStride: 9 * 140, scale: 0.2 },
    mask: 'combined',
    window: 3,
  },
  {
    name: 'multi-query, soft-cap and ALiBi, no mask',
    dims: {
      B: 1,
      T: 5,
      S: 5,
      H: 3,
      D: 4,
      Hkv: 1,
      qBatchStride: 5 * 12,
      kvBatchStride: 5 * 4,
      scale: 0.9,
      softCap: 2,
      alibi: new Float32Array([0.5, 0.25, 0.125]),
    },
    mask: 'none',
  },
  {
    name: 'dropout keep-mask, 100 keys (more than 64 threads)',
    dims: { B: 1, T: 3, S: 100, H: 2, D: 6, qBatchStride: 3 * 12, kvBatchStride: 100 * 12, scale: 0.4 },
    mask: 'none',
    dropP: 0.25,
  },
  {
    name: "a key/value cache's batch stride, queries from position 4, ALiBi",
    dims: {
      B: 2,
      T: 2,
      S: 6,
      H: 2,
      D: 5,
      qBatchStride: 2 * 10,
      kvBatchStride: 11 * 10,
      scale: 0.5,
      qStart: 4,
      alibi: new Float32Array([0.3, 0.7]),
    },
    mask: 'none',
  },
];

describe.skipIf(!gpu.ok)(
  gpu.ok ? `WebGPU attention on ${gpu.adapter.name}` : `WebGPU attention (skipped: ${gpu.reason})`,
  () => {
    // Built only where an adapter opened: a skipped describe's body still runs to collect its tests.
    const k = gpu.ok ? new WebGpuKernels(gpu.device) : (null as unknown as WebGpuKernels);
    afterAll(() => {
      if (gpu.ok) gpu.device.destroy();
    });
    function dev(host: Float32Array): Float32Array {
      const d = k.mem.alloc(host.length);
      d.set(host);
      k.mem.upload(d);
      return d;
    }
    async function back(d: Float32Array): Promise<Float32Array> {
      await k.mem.download(d);
      return d.slice();
    }

    for (const c of cases)
      it(c.name, async () => {
        const { B, T, S, H, qBatchStride, kvBatchStride } = c.dims;
        const nq = B * qBatchStride;
        const nkv = B * kvBatchStride;
        const q = rand(nq, 1);
        const kk = rand(nkv, 2);
        const v = rand(nkv, 3);
        const dout = rand(nq, 4);
        let mask: MaskView | null = null;
        let gpuMask: MaskView | null = null;
        if (c.mask === 'combined') {
          const pad = new Uint8Array(B * T).fill(1);
          pad[T - 1] = 0; // batch 0's last key is padding
          const data = new Uint8Array(B * T * T);
          fillCombinedMask(data, pad, B, T, c.window ?? 0);
          data.fill(0, T * T, T * T + T); // batch 1, row 0: fully masked
          mask = combinedView(data, T);
          const gData = k.mem.allocBytes(data.length);
          gData.set(data);
          gpuMask = { ...mask, data: gData };
        }
        const dropP = c.dropP ?? 0;
        const keep = dropP > 0 ? new Uint8Array(B * H * T * S).map((_, i) => ((i * 7) % 4 === 0 ? 0 : 1)) : null;

        const out = new Float32Array(nq);
        const probs = new Float32Array(B * H * T * S);
        ref.attentionForward(out, probs, q, kk, v, c.dims, mask, keep, dropP);
        const [gOut, gProbs, gq, gk, gv] = [dev(rand(nq, 9)), dev(rand(probs.length, 8)), dev(q), dev(kk), dev(v)];
        k.attentionForward(gOut, gProbs, gq, gk, gv, c.dims, gpuMask, keep, dropP);
        expect(maxRelErr(await back(gProbs), probs), 'probs').toBeLessThanOrEqual(1e-5);
        expect(maxRelErr(await back(gOut), out), 'out').toBeLessThanOrEqual(1e-5);
        if (c.mask === 'combined') {
          const row = await back(gProbs);
          for (let h = 0; h < H; h++) {
            const at = ((1 * H + h) * T + 0) * S;
            expect(Array.from(row.subarray(at, at + S)).every((p) => p === 0)).toBe(true);
          }
        }

        const [dq, dk, dv] = [rand(nq, 5), rand(nkv, 6), rand(nkv, 7)];
        const [gdq, gdk, gdv] = [dev(dq), dev(dk), dev(dv)];
        ref.attentionBackward(dq, dk, dv, dout, probs, q, kk, v, c.dims, keep, dropP);
        k.attentionBackward(gdq, gdk, gdv, dev(dout), gProbs, gq, gk, gv, c.dims, keep, dropP);
        expect(maxRelErr(await back(gdq), dq), 'dq').toBeLessThanOrEqual(1e-5);
        expect(maxRelErr(await back(gdk), dk), 'dk').toBeLessThanOrEqual(1e-5);
        expect(maxRelErr(await back(gdv), dv), 'dv').toBeLessThanOrEqual(1e-5);
      });
  },
);
