/**
 * What the PyTorch parity tests share (pytorchParity.test.ts, modernParity.test.ts): the
 * backends they run on, and a golden file's batch and model, loaded with PyTorch's weights.
 */
import { expect } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { ModelConfig } from '../../../../src/engine/config';
import type { SafetensorsFile } from '../../../../src/engine/io/safetensors';
import type { Batch } from '../../../../src/engine/models/inputs';
import { loadTorchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';

/** The reference backend, and WebAssembly SIMD (float32, fused kernels) with and without FMA where the runtime has it. */
export const PARITY_BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend({ fma: false })
    ? [['wasm', () => createWasmBackend({ fma: false }) as Backend] as [string, () => Backend]]
    : []),
  ...(createWasmBackend({ fma: true })
    ? [['wasm+fma', () => createWasmBackend({ fma: true }) as Backend] as [string, () => Backend]]
    : []),
];

/** A tensor of a golden file (throws naming it when the file lacks it). */
export function goldenTensor(f: SafetensorsFile, name: string): { shape: number[]; data: Float32Array | Int32Array } {
  const t = f.tensors.get(name);
  if (!t) throw new Error(`golden file lacks ${name}`);
  return { shape: t.shape, data: t.data as Float32Array | Int32Array };
}

/** The golden file's batch, and our model of `cfg` on `backend` holding its `param.*` weights (shapes checked). */
export function goldenModel(
  f: SafetensorsFile,
  cfg: ModelConfig,
  backend: Backend,
): { model: Transformer; batch: Batch } {
  let batch: Batch;
  if (cfg.kind === 'encoder-decoder') {
    const src = goldenTensor(f, 'input.src');
    const tin = goldenTensor(f, 'input.tgt_in');
    const [B, T] = tin.shape as [number, number];
    batch = {
      B,
      T,
      S: src.shape[1] as number,
      src: src.data as Int32Array,
      input: tin.data as Int32Array,
      targets: goldenTensor(f, 'input.tgt_out').data as Int32Array,
    };
  } else {
    const idx = goldenTensor(f, 'input.idx');
    const [B, T] = idx.shape as [number, number];
    batch = { B, T, input: idx.data as Int32Array, targets: goldenTensor(f, 'input.targets').data as Int32Array };
  }
  const model = new Transformer(cfg, {
    maxBatch: batch.B,
    maxLen: batch.T,
    ...(batch.S ? { maxSrcLen: batch.S } : {}),
  }).bind(backend);
  loadTorchTensors(model, (n, shape) => {
    const t = f.tensors.get(`param.${n}`);
    if (!t) return null;
    expect(t.shape, n).toEqual(shape);
    return t.data;
  });
  return { model, batch };
}

/** Element ranges (per tensor) whose true gradient is exactly 0 (key biases): float32 noise only. */
export function zeroGrad(f: SafetensorsFile): Record<string, [number, number][]> {
  return JSON.parse(f.metadata.zeroGrad ?? '{}') as Record<string, [number, number][]>;
}

/** True when element i lies in one of the ranges. */
export function inRanges(i: number, ranges: [number, number][] | undefined): boolean {
  return !!ranges?.some(([a, b]) => i >= a && i < b);
}
