/**
 * A device with WebGPU's default limits (128 MiB per storage binding: what `requestDevice()` gives
 * without `requiredLimits`; no device can be asked for less) refuses a model whose attention
 * probabilities exceed it, in one line naming the tensor, its size, the limit and what to lower,
 * before a buffer of the activations is created. On whatever adapter Dawn opens (here SwiftShader);
 * skips, naming why, when none opens.
 *
 * Leaves out: the adapter's own limits, splitting and running out of memory (webgpuLimits.test.ts).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createWebGpuBackend } from '../../../../../src/engine/backends/webgpu/webgpuBackend';
import type { ModelConfig } from '../../../../../src/engine/config';
import { presetConfig } from '../../../../../src/engine/config';
import { EngineError } from '../../../../../src/engine/errors';
import { Transformer } from '../../../../../src/engine/models/transformer';

/** Dawn's instance (kept alive as long as its device), or why there is none. */
const dawn = await import('webgpu').then(
  (m) => (m as { create(flags: string[]): GPU }).create([]),
  (e: unknown) => String(e),
);
const adapter = typeof dawn === 'string' ? null : await dawn.requestAdapter();
const device = adapter ? await adapter.requestDevice() : null;
afterAll(() => device?.destroy());

describe.skipIf(!device)(
  device ? 'a default-limits WebGPU device' : 'a default-limits WebGPU device (skipped: no adapter)',
  () => {
    it('refuses attention probabilities over its 128 MiB binding, naming them', () => {
      if (!device) return;
      expect(device.limits.maxStorageBufferBindingSize).toBe(2 ** 27);
      const backend = createWebGpuBackend(device);
      const wide: ModelConfig = { ...presetConfig('decoder-only', 'tiny', 24), maxLen: 256 };
      expect(wide.nHeads).toBe(4);
      // batch 160 × 4 heads × 256² floats = 168 MB of attention probabilities per layer.
      expect(() => new Transformer(wide, { maxBatch: 160 }).bind(backend)).toThrowError(
        new EngineError(
          'config/invalid',
          `The attention probabilities of transformer.h.0.attn (batch·heads·context²): 168 MB > this GPU ` +
            "adapter's largest storage buffer (134 MB); lower batch or context, or use --backend wasm.",
        ),
      );
    });
  },
);
