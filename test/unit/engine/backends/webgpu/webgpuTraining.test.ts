/**
 * Training on the WebGPU backend against the WebAssembly backend: the same preset, seed and
 * batches give per-step losses within 1e-4 over 50 steps (Trainer.stepAsync on the GPU, the
 * synchronous step on WebAssembly), for the tiny decoder-only and encoder-decoder presets with
 * dropout and for llama-tiny (whose RoPE tables the model fills on the host at its first forward). Runs on whatever adapter Dawn opens — here SwiftShader — and
 * skips, naming why, only when none opens.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../../../src/engine/backend';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import type { WebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import { createWebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import type { ModelConfig } from '../../../../../src/engine/config';
import { presetConfig } from '../../../../../src/engine/config';
import type { Batch } from '../../../../../src/engine/models/inputs';
import { Rng } from '../../../../../src/engine/rng';
import { openNodeGpu } from '../../../../../src/lab/platform/webgpu.node';
import { testTrainer } from './trainers';

const gpu = await openNodeGpu();
const STEPS = 50;

/** Batch `i` of a run: random ids (the last row padded with 0, the pad id, in its second half). */
function batchAt(cfg: ModelConfig, i: number, B: number, T: number): Batch {
  const rng = new Rng(1000 + i);
  const ids = (n: number, v: number): Int32Array => Int32Array.from({ length: n }, () => 1 + rng.int(v - 1));
  const input = ids(B * T, cfg.vocabSize);
  const targets = ids(B * T, cfg.vocabSize);
  for (let t = T >> 1; t < T; t++) {
    input[(B - 1) * T + t] = 0;
    targets[(B - 1) * T + t] = 0;
  }
  if (cfg.kind === 'decoder-only') return { B, T, input, targets };
  const S = T + 2;
  const src = ids(B * S, cfg.srcVocabSize);
  return { B, T, S, src, input, targets };
}

describe.skipIf(!gpu.ok)(
  gpu.ok ? `WebGPU training on ${gpu.adapter.name}` : `WebGPU training (skipped: ${gpu.reason})`,
  () => {
    afterAll(() => {
      if (gpu.ok) gpu.device.destroy();
    });

    const encoderDecoder = { ...presetConfig('encoder-decoder', 'tiny', 24, 20), dropout: 0.1 };
    const llamaTiny = presetConfig('decoder-only', 'llama-tiny', 24);
    const cases: [string, ModelConfig, number][] = [
      [
        'decoder-only preset tiny, dropout 0.1, 16-token rows',
        { ...presetConfig('decoder-only', 'tiny', 24), dropout: 0.1 },
        16,
      ],
      ['encoder-decoder preset tiny, dropout 0.1, 12-token rows', encoderDecoder, 12],
      ['decoder-only preset llama-tiny (RMSNorm, RoPE, SwiGLU, GQA), 16-token rows', llamaTiny, 16],
    ];
    it.each(cases)('%s: 50 steps within 1e-4 of WebAssembly', async (_name, cfg, T) => {
      if (!gpu.ok) return;
      const wasmBackend = createWasmBackend({ fma: false });
      expect(wasmBackend, 'the WebAssembly backend loads').not.toBeNull();
      const onWasm = testTrainer(cfg, wasmBackend as Backend);
      const webgpu: WebGpuBackend = createWebGpuBackend(gpu.device);
      const onGpu = testTrainer(cfg, webgpu);
      webgpu.uploadAll();
      const want: number[] = [];
      const got: number[] = [];
      const bindGroups: number[] = [];
      for (let i = 0; i < STEPS; i++) {
        const batch = batchAt(cfg, i, 2, T);
        want.push(onWasm.step(batch, new Rng(50 + i)).loss);
        got.push((await onGpu.stepAsync(batch, webgpu, new Rng(50 + i))).loss);
        bindGroups.push(webgpu.kernels.mem.cachedBindGroups);
      }
      // Every step records the same dispatches into the same uniform slots: the bind groups made by the first
      // steps are replayed by the rest, none made anew (a step makes hundreds).
      expect(bindGroups[2] as number).toBeGreaterThan(50);
      expect(bindGroups[STEPS - 1]).toBe(bindGroups[2]);
      const worstLoss = Math.max(...want.map((w, i) => Math.abs(w - (got[i] as number))));
      expect(worstLoss, `per-step losses: wasm ${want.join(', ')}; webgpu ${got.join(', ')}`).toBeLessThan(1e-4);
      // It learned: the loss falls toward the entropy of the random ids.
      expect(got[STEPS - 1] as number).toBeLessThan(got[0] as number);
      // The parameters on the device match after the run too: within float noise on average (Adam amplifies
      // a few gradients near zero into differences of 1e-3 at most over 50 steps).
      await webgpu.downloadAll();
      let worst = 0;
      let sum = 0;
      onGpu.model.params.forEach((p, i) => {
        const d = Math.abs(p - (onWasm.model.params[i] as number));
        worst = Math.max(worst, d);
        sum += d;
      });
      expect(worst).toBeLessThan(1e-2);
      expect(sum / onGpu.model.params.length).toBeLessThan(1e-5);
    });
  },
);
