/**
 * Buffers against a real device's limits, on whatever adapter Dawn opens (here SwiftShader):
 * - activations split over many GPU buffers (a lowered largest allocation) train step for step as
 *   WebAssembly does;
 * - an allocation the device has no memory for (SwiftShader refuses a buffer of its whole 1 GiB
 *   binding limit) is raised as one line by `checkAllocations`, the session's check before its first step.
 * Skips, naming why, when no adapter opens.
 *
 * Leaves out: a device with WebGPU's default limits (webgpuDefaultLimits.test.ts: its own Dawn instance,
 * in its own process).
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../../../src/engine/backend';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { createWebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import { WebGpuMemory } from '../../../../../src/engine/backends/webgpu/webgpuMemory';
import type { ModelConfig } from '../../../../../src/engine/config';
import { presetConfig } from '../../../../../src/engine/config';
import { EngineError } from '../../../../../src/engine/errors';
import type { Batch } from '../../../../../src/engine/models/inputs';
import { Transformer } from '../../../../../src/engine/models/transformer';
import { Rng } from '../../../../../src/engine/rng';
import { openNodeGpu } from '../../../../../src/lab/platform/webgpu.node';
import { testTrainer } from './trainers';

const gpu = await openNodeGpu();
afterAll(() => {
  if (gpu.ok) gpu.device.destroy();
});

const cfg: ModelConfig = presetConfig('decoder-only', 'tiny', 24);

function batchAt(i: number): Batch {
  const rng = new Rng(900 + i);
  const ids = (): Int32Array => Int32Array.from({ length: 2 * 12 }, () => 1 + rng.int(cfg.vocabSize - 1));
  return { B: 2, T: 12, input: ids(), targets: ids() };
}

describe.skipIf(!gpu.ok)(gpu.ok ? `GPU buffer limits on ${gpu.adapter.name}` : 'GPU buffer limits (skipped)', () => {
  it('activations split over many GPU buffers train step for step as WebAssembly does', async () => {
    if (!gpu.ok) return;
    const onWasm = testTrainer(cfg, createWasmBackend({ fma: false }) as Backend);
    const webgpu = createWebGpuBackend(gpu.device);
    const params = new Transformer(cfg, { maxBatch: 2 }).store.count;
    // The largest allocation lowered to the parameters' size: the activations take several buffers.
    const split = Object.assign(webgpu, { maxAllocFloats: params });
    let allocations = 0;
    const alloc = split.alloc.bind(split);
    split.alloc = (n) => (allocations++, alloc(n));
    const onGpu = testTrainer(cfg, split);
    split.uploadAll();
    await split.checkAllocations();
    expect(allocations).toBeGreaterThan(4);
    for (let i = 0; i < 4; i++) {
      const want = onWasm.step(batchAt(i));
      const got = await onGpu.stepAsync(batchAt(i), split);
      expect(Math.abs(got.loss - want.loss), `step ${i + 1} loss`).toBeLessThan(1e-4);
    }
  });

  it('an allocation the GPU has no memory for is raised as one line before the first step', async () => {
    if (!gpu.ok) return;
    const mem = new WebGpuMemory(gpu.device);
    const err = await (async () => {
      // SwiftShader refuses the first buffer of its whole binding limit; a real GPU fills up within a few.
      for (let i = 0; i < 8; i++) {
        mem.alloc(mem.maxAllocFloats);
        await mem.checkAllocations();
      }
    })().catch((e: unknown) => e);
    expect(EngineError.is(err, 'config/invalid')).toBe(true);
    expect((err as Error).message).toMatch(
      /^The GPU ran out of memory allocating its buffers \(the largest 1\.1 GB, [\d.]+ GB in all on this device\); lower batch or context \(or the model\), or use --backend wasm\.$/,
    );
  });
});
