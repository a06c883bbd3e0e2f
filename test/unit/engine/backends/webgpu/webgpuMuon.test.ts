/**
 * Muon on the WebGPU backend (its momentum, Newton–Schulz iterations and update on the device:
 * `Backend.muonMatrix`) against the reference backend's Muon (float32, the host's loops): the same
 * model, seed and batches give the same losses and, after a few steps, parameters within 1e-5
 * relative, for wide and tall hidden matrices (decoder-only tiny: the feed-forward's W1 is tall,
 * W2 wide) and llama-tiny (grouped-query W_k/W_v, SwiGLU). Runs on whatever adapter Dawn opens —
 * here SwiftShader — and skips, naming why, only when none opens.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import type { WebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import { createWebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import type { ModelConfig } from '../../../../../src/engine/config';
import { presetConfig } from '../../../../../src/engine/config';
import type { Batch } from '../../../../../src/engine/models/inputs';
import { Rng } from '../../../../../src/engine/rng';
import { openNodeGpu } from '../../../../../src/lab/platform/webgpu.node';
import { testTrainer } from './trainers';

/** Muon for the matrices (nanochat's rates), AdamW for the rest. */
const MUON = { type: 'muon', beta2: 0.95, muonLr: 0.02, muonMomentum: 0.95 } as const;

const gpu = await openNodeGpu();
const STEPS = 4;

/** Batch `i`: random ids. */
function batchAt(cfg: ModelConfig, i: number, B: number, T: number): Batch {
  const rng = new Rng(500 + i);
  const ids = (n: number): Int32Array => Int32Array.from({ length: n }, () => 1 + rng.int(cfg.vocabSize - 1));
  return { B, T, input: ids(B * T), targets: ids(B * T) };
}

describe.skipIf(!gpu.ok)(gpu.ok ? `Muon on ${gpu.adapter.name}` : `Muon on WebGPU (skipped: ${gpu.reason})`, () => {
  afterAll(() => {
    if (gpu.ok) gpu.device.destroy();
  });

  const cases: [string, ModelConfig][] = [
    ['decoder-only preset tiny', presetConfig('decoder-only', 'tiny', 24)],
    ['llama-tiny (GQA, SwiGLU, RMSNorm, RoPE)', presetConfig('decoder-only', 'llama-tiny', 24)],
  ];
  it.each(cases)('%s: 4 steps match the reference backend’s Muon within 1e-5', async (_name, cfg) => {
    if (!gpu.ok) return;
    const reference = testTrainer(cfg, createReferenceBackend(), { opt: MUON });
    const webgpu: WebGpuBackend = createWebGpuBackend(gpu.device);
    const onGpu = testTrainer(cfg, webgpu, { opt: MUON });
    webgpu.uploadAll();
    const start = Float32Array.from(onGpu.model.params);
    for (let i = 0; i < STEPS; i++) {
      const batch = batchAt(cfg, i, 2, 12);
      const want = reference.step(batch).loss;
      const got = (await onGpu.stepAsync(batch, webgpu)).loss;
      expect(Math.abs(got - want), `step ${i + 1}`).toBeLessThan(1e-5 * Math.max(1, Math.abs(want)));
    }
    await webgpu.downloadAll();
    const p = onGpu.model.params;
    const q = reference.model.params;
    let scale = 0;
    let worst = 0;
    let moved = 0;
    for (let i = 0; i < p.length; i++) {
      scale = Math.max(scale, Math.abs(q[i] as number));
      worst = Math.max(worst, Math.abs((p[i] as number) - (q[i] as number)));
      moved = Math.max(moved, Math.abs((q[i] as number) - (start[i] as number)));
    }
    expect(moved, 'the reference moved the parameters').toBeGreaterThan(1e-3);
    expect(worst / scale, `worst |Δp| ${worst} of max |p| ${scale}`).toBeLessThan(1e-5);
    // Muon's momentum (in the first moments) came from the device too.
    const mGpu = onGpu.optimizer.state().m;
    const mRef = reference.optimizer.state().m;
    let mScale = 0;
    let mWorst = 0;
    for (let i = 0; i < mGpu.length; i++) {
      mScale = Math.max(mScale, Math.abs(mRef[i] as number));
      mWorst = Math.max(mWorst, Math.abs((mGpu[i] as number) - (mRef[i] as number)));
    }
    expect(mWorst / mScale).toBeLessThan(1e-5);
  });
});
