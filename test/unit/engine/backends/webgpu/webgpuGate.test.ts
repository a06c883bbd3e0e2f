/**
 * The clip factor and the non-finite guard of a WebGPU training step, on the device
 * (`gateUpdate`): the update is recorded before the loss and norm are read back, so the device
 * alone decides. With a clip that engages every step, the losses and norms follow WebAssembly's
 * (where the host clips); with a non-finite loss the step stops with `train/nonFinite` and the
 * parameters, moments and step count are as they were, though the update had been recorded.
 * Runs on whatever adapter Dawn opens — here SwiftShader — and skips, naming why, when none opens.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../../../src/engine/backend';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import type { WebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import { createWebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import type { ModelConfig } from '../../../../../src/engine/config';
import { presetConfig } from '../../../../../src/engine/config';
import { EngineError } from '../../../../../src/engine/errors';
import type { Batch } from '../../../../../src/engine/models/inputs';
import { Rng } from '../../../../../src/engine/rng';
import { openNodeGpu } from '../../../../../src/lab/platform/webgpu.node';
import { testTrainer } from './trainers';

const gpu = await openNodeGpu();
const cfg: ModelConfig = presetConfig('decoder-only', 'tiny', 24);

function batchAt(i: number): Batch {
  const rng = new Rng(700 + i);
  const ids = (): Int32Array => Int32Array.from({ length: 2 * 12 }, () => 1 + rng.int(cfg.vocabSize - 1));
  return { B: 2, T: 12, input: ids(), targets: ids() };
}

describe.skipIf(!gpu.ok)(gpu.ok ? `the update's gate on ${gpu.adapter.name}` : `the update's gate (skipped)`, () => {
  afterAll(() => {
    if (gpu.ok) gpu.device.destroy();
  });

  it.each([
    ['AdamW', { type: 'adamw' }],
    ['Muon', { type: 'muon', muonLr: 0.02, muonMomentum: 0.95 }],
  ] as const)('%s: a clip that engages every step follows WebAssembly’s host clipping', async (_name, opt) => {
    if (!gpu.ok) return;
    const clip = { ...opt, clipGradNorm: 0.05 };
    const onWasm = testTrainer(cfg, createWasmBackend({ fma: false }) as Backend, { opt: clip });
    const webgpu: WebGpuBackend = createWebGpuBackend(gpu.device);
    const onGpu = testTrainer(cfg, webgpu, { opt: clip });
    webgpu.uploadAll();
    for (let i = 0; i < 8; i++) {
      const want = onWasm.step(batchAt(i));
      const got = await onGpu.stepAsync(batchAt(i), webgpu);
      expect(got.clipped && want.clipped, `step ${i + 1} clipped`).toBe(true);
      expect(Math.abs(got.loss - want.loss), `step ${i + 1} loss`).toBeLessThan(1e-4);
      expect(Math.abs(got.gradNorm - want.gradNorm) / want.gradNorm, `step ${i + 1} norm`).toBeLessThan(1e-4);
    }
  });

  it('a non-finite loss stops the step; the device left everything as it was, though the update was recorded', async () => {
    if (!gpu.ok) return;
    const webgpu: WebGpuBackend = createWebGpuBackend(gpu.device);
    const t = testTrainer(cfg, webgpu);
    webgpu.uploadAll();
    await t.stepAsync(batchAt(0), webgpu); // moments and parameters are no longer their initial ones
    await webgpu.downloadAll();
    const p = t.model.params;
    p[0] = Number.NaN; // the embedding of id 0: not a target, but every row of the table feeds the output
    p[p.length - 1] = Number.POSITIVE_INFINITY;
    webgpu.uploadAll();
    const before = { params: Float32Array.from(p), m: Float32Array.from(t.optimizer.state().m) };
    const order: string[] = [];
    const adam = webgpu.adamStep.bind(webgpu);
    const read = webgpu.readStats.bind(webgpu);
    webgpu.adamStep = (...a) => (order.push('update'), adam(...a));
    webgpu.readStats = (...a) => (order.push('read'), read(...a));
    const err = await t.stepAsync(batchAt(1), webgpu).catch((e: unknown) => e);
    expect(EngineError.is(err) && err.code).toBe('train/nonFinite');
    expect(order).toEqual(['update', 'read']); // the host had not seen the loss when the update was recorded
    expect(t.optimizer.stepCount).toBe(1);
    await webgpu.downloadAll();
    const same = (a: ArrayLike<number>, b: ArrayLike<number>): boolean =>
      Array.from(a).every((x, i) => Object.is(x, b[i]));
    expect(same(t.model.params, before.params)).toBe(true);
    expect(same(t.optimizer.state().m, before.m)).toBe(true);
  });
});
