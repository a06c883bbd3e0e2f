/**
 * `import` of PyTorch's own files (test/golden/torch-pickle): a GPT-2 `pytorch_model.bin`
 * (tied lm_head sharing wte's storage, a non-contiguous c_attn) gives the same weights and
 * logits as the same model's `.safetensors` (test/golden/import/hf-gpt2); nanoGPT's
 * `ckpt.pt` (state dict under "model", `_orig_mod.` names, an optimizer state beside it, no
 * config.json) is sized by its own `model_args`; a hostile file writes nothing.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import type { ImportPlan } from '../../../../src/engine/models/importLayouts';
import { Transformer } from '../../../../src/engine/models/transformer';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { importCheckpoint, openCheckpoint, readCheckpointWeights } from '../../../../src/lab/interop/importCheckpoint';

const TORCH = path.resolve(__dirname, '../../../golden/torch-pickle');
const IMPORT = path.resolve(__dirname, '../../../golden/import');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-import-torch-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function planned(from: string): Promise<{ plan: ImportPlan; notes: string[] }> {
  return readCheckpointWeights(await openCheckpoint(NODE_FS, from));
}

/** Largest |ours − PyTorch's| on golden `expectedOf`'s input. */
function maxDiff(plan: ImportPlan, expectedOf: string, backend: Backend): number {
  const expected = decodeSafetensors(
    new Uint8Array(fs.readFileSync(path.join(IMPORT, expectedOf, 'expected.safetensors'))),
  );
  const idx = expected.tensors.get('input.idx');
  const logits = expected.tensors.get('output.logits');
  if (!idx || !logits) throw new Error('golden file incomplete');
  const [B, T] = idx.shape as [number, number];
  const model = new Transformer(plan.config, { maxBatch: B, maxLen: T, padId: -1 }).bind(backend);
  for (const p of model.paramList) p.data.set(plan.model.param(p.name).data);
  const input = Int32Array.from(idx.data);
  model.forward({ B, T, input, targets: input }, { train: false });
  const ours = model.logits();
  expect(ours.length).toBe(logits.data.length);
  let diff = 0;
  for (let i = 0; i < ours.length; i++)
    diff = Math.max(diff, Math.abs((ours[i] as number) - (logits.data[i] as number)));
  return diff;
}

describe('a GPT-2 pytorch_model.bin imports as its .safetensors does', () => {
  it('same layout, config and weights (bit for bit), tied lm_head found from the shared storage', async () => {
    const bin = await planned(path.join(TORCH, 'hf-gpt2-bin'));
    const st = await planned(path.join(IMPORT, 'hf-gpt2'));
    expect(bin.plan.layout).toBe('hf-gpt2');
    expect(bin.plan.config).toEqual(st.plan.config);
    expect(bin.plan.config.tieEmbeddings).toBe(true);
    expect(bin.notes[0]).toBe('read a torch.save zip: the file is the state dict');
    expect(bin.notes).toContain('lm_head.weight is the token embedding (one storage in the file): tied');
    for (const p of st.plan.model.paramList)
      expect(Array.from(bin.plan.model.param(p.name).data), p.name).toEqual(Array.from(p.data));
  });

  it.each([
    ['reference', createReferenceBackend],
    ['wasm', createWasmBackend],
  ] as const)("PyTorch's logits to 1e-4 (%s backend)", async (_name, make) => {
    const backend = make();
    if (!backend) throw new Error('WebAssembly SIMD is unavailable here');
    const { plan } = await planned(path.join(TORCH, 'hf-gpt2-bin', 'pytorch_model.bin'));
    expect(maxDiff(plan, 'hf-gpt2', backend)).toBeLessThan(1e-4);
  });
});

describe('nanoGPT\'s ckpt.pt: the state dict under "model", sized by model_args', () => {
  it('imports with heads from model_args and gives its logits', async () => {
    const { plan, notes } = await planned(path.join(TORCH, 'nanogpt-ckpt'));
    expect(plan.layout).toBe('nanogpt');
    expect(plan.config).toMatchObject({ nHeads: 4, bias: false, tieEmbeddings: false, nDecoderLayers: 2, maxLen: 16 });
    expect(notes.slice(0, 2)).toEqual([
      'read a torch.save zip: the state dict under "model"',
      'no config.json: the checkpoint\'s "model_args" serves as one',
    ]);
    expect(notes.join(' ')).toMatch(/4 heads from config\.json n_head/);
    expect(maxDiff(plan, 'nanogpt-nobias', createReferenceBackend())).toBeLessThan(1e-4);
  });
});

describe('importCheckpoint of torch files', () => {
  it('writes a run folder from pytorch_model.bin (tokenizer from the safetensors golden)', async () => {
    const out = path.join(tmp, 'gpt2-bin-run');
    const res = await importCheckpoint(NODE_FS, {
      from: path.join(TORCH, 'hf-gpt2-bin'),
      out,
      tokenizer: path.join(IMPORT, 'hf-gpt2'),
    });
    expect(res.modelFile).toBe(path.join(TORCH, 'hf-gpt2-bin', 'pytorch_model.bin'));
    expect(res.layout).toBe('hf-gpt2');
    expect(res.ignored).toEqual(expect.arrayContaining(['transformer.h.0.attn.bias', 'lm_head.weight']));
    expect(fs.readdirSync(out).sort()).toEqual(['model.safetensors', 'run.json', 'tokenizer.json']);
  });

  it('a folder of sharded .bin files is refused in one line, naming them', async () => {
    const dir = path.join(tmp, 'sharded');
    fs.mkdirSync(dir);
    for (const n of ['pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'])
      fs.copyFileSync(path.join(TORCH, 'hf-gpt2-bin', 'pytorch_model.bin'), path.join(dir, n));
    await expect(importCheckpoint(NODE_FS, { from: dir, out: path.join(tmp, 'sharded-run') })).rejects.toThrow(
      /holds 2 PyTorch checkpoint files \(pytorch_model-00001-of-00002\.bin, .*sharded checkpoints must be merged/,
    );
  });

  it('a hostile .bin is refused naming its global, and no run folder is written', async () => {
    const dir = path.join(tmp, 'hostile');
    fs.mkdirSync(dir);
    fs.copyFileSync(path.join(TORCH, 'hostile.bin'), path.join(dir, 'pytorch_model.bin'));
    const out = path.join(tmp, 'hostile-run');
    await expect(importCheckpoint(NODE_FS, { from: dir, out })).rejects.toThrow(
      /^pytorch_model\.bin: its pickle refers to (posix|os)\.system/,
    );
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(tmp).filter((n) => n.includes('importing'))).toEqual([]);
  });
});
