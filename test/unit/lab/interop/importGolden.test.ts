/**
 * The checkpoints of other projects (test/golden/import, written by
 * scripts/pytorch/make_import_golden.py from hand-written nanoGPT and Hugging Face GPT-2
 * modules) import into our Transformer and give PyTorch's logits on the same input to 1e-4.
 * hf-gpt2-f16 holds float16 weights; its logits were computed from those same rounded
 * weights, so it meets the same tolerance.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { Transformer } from '../../../../src/engine/models/transformer';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { openCheckpoint, readCheckpointWeights } from '../../../../src/lab/interop/importCheckpoint';

const GOLDEN = path.resolve(__dirname, '../../../golden/import');
const TOL = 1e-4;

const CASES = [
  ['nanogpt-bias', 'nanogpt', { bias: true, tieEmbeddings: true, activation: 'gelu' }],
  ['nanogpt-nobias', 'nanogpt', { bias: false, tieEmbeddings: false, activation: 'gelu' }],
  ['hf-gpt2', 'hf-gpt2', { bias: true, tieEmbeddings: true, activation: 'geluTanh' }],
  ['hf-gpt2-f16', 'hf-gpt2', { bias: true, tieEmbeddings: true, activation: 'geluTanh' }],
] as const;

/** Largest |ours − PyTorch's| over the golden input, on `backend`. */
async function maxDiff(
  name: string,
  backend: Backend,
): Promise<{ diff: number; layout: string; config: Transformer['config'] }> {
  const opened = await openCheckpoint(NODE_FS, path.join(GOLDEN, name));
  const { plan } = await readCheckpointWeights(opened);
  const expected = decodeSafetensors(new Uint8Array(fs.readFileSync(path.join(GOLDEN, name, 'expected.safetensors'))));
  const idx = expected.tensors.get('input.idx');
  const logits = expected.tensors.get('output.logits');
  if (!idx || !logits) throw new Error('golden file incomplete');
  const [B, T] = idx.shape as [number, number];
  // These vocabularies have no PAD: id 0 is a real token (the input has several).
  const model = new Transformer(plan.config, { maxBatch: B, maxLen: T, padId: -1 }).bind(backend);
  for (const p of model.paramList) p.data.set(plan.model.param(p.name).data);
  const input = Int32Array.from(idx.data);
  model.forward({ B, T, input, targets: input }, { train: false });
  const ours = model.logits();
  expect(ours.length).toBe(logits.data.length);
  let diff = 0;
  for (let i = 0; i < ours.length; i++)
    diff = Math.max(diff, Math.abs((ours[i] as number) - (logits.data[i] as number)));
  return { diff, layout: plan.layout, config: plan.config };
}

describe('import golden checkpoints: PyTorch logits to 1e-4', () => {
  it.each(CASES)('%s (reference backend)', async (name, layout, expectConfig) => {
    const r = await maxDiff(name, createReferenceBackend());
    expect(r.layout).toBe(layout);
    expect(r.config).toMatchObject({
      ...expectConfig,
      vocabSize: 270,
      dModel: 32,
      nHeads: 4,
      nDecoderLayers: 2,
      dFF: 128,
      maxLen: 16,
    });
    expect(r.diff).toBeLessThan(TOL);
  });

  it.each(CASES)('%s (wasm backend)', async (name) => {
    const wasm = createWasmBackend();
    if (!wasm) throw new Error('WebAssembly SIMD is unavailable here');
    const d = (await maxDiff(name, wasm)).diff; // measured: ≤ 1.1e-6 (reference ≤ 1.0e-6)
    expect(d).toBeLessThan(TOL);
  });
});
