/**
 * `import` of state dicts saved through a wrapper: nn.DataParallel / DistributedDataParallel put
 * `module.` before every name, torch.compile `_orig_mod.`. A nanoGPT-shaped and a GPT-2-shaped
 * (Conv1D) model, written as torch.save zips (torchSave.ts) and as .safetensors with the prefix,
 * import to the same config and logits as the same files without it, and the import says it
 * dropped the prefix; a prefix on only some names is not dropped and the file is refused.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import { presetConfig, validateConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import { encodeSafetensors } from '../../../../src/engine/io/safetensors';
import { gatherTorchTensor, torchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { openRun } from '../../../../src/lab/inference/openRun';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { writeTokenizer } from '../../../../src/lab/runs/tokenizerFile';
import type { SavedTensor } from './torchSave';
import { torchSaveZip } from './torchSave';

const tok = trainCharTokenizer(['the quick brown fox jumps over the lazy dog 0123456789']);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-import-wrapped-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const CONV1D = /\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$/;

/** A random model of `shape` as PyTorch saves it: nanoGPT's names, or Hugging Face GPT-2's (Conv1D [in, out]). */
function stateDict(shape: 'nanogpt' | 'hf-gpt2'): { tensors: SavedTensor[]; config: ModelConfig; json: object } {
  const c = validateConfig({
    ...presetConfig('decoder-only', 'tiny', tok.vocabSize),
    maxLen: 16,
    activation: shape === 'hf-gpt2' ? 'geluTanh' : 'gelu',
    tieEmbeddings: shape === 'hf-gpt2',
  });
  const model = new Transformer(c, { maxBatch: 1 }).bind(createReferenceBackend());
  model.initialize(new Rng(11));
  const tensors = torchTensors(model)
    .filter((t) => !t.alias)
    .map((t): SavedTensor => {
      const data = gatherTorchTensor(t);
      if (shape === 'nanogpt' || !CONV1D.test(t.name)) return { name: t.name, shape: t.shape, data };
      const [o, i] = t.shape as [number, number];
      const tr = new Float32Array(o * i);
      for (let r = 0; r < o; r++) for (let k = 0; k < i; k++) tr[k * o + r] = data[r * i + k] as number;
      return { name: t.name, shape: [i, o], data: tr };
    });
  const json =
    shape === 'nanogpt'
      ? { n_head: c.nHeads, bias: c.bias }
      : { n_head: c.nHeads, activation_function: 'gelu_new', layer_norm_epsilon: c.layerNormEps };
  return { tensors, config: c, json };
}

/** A folder with `file` (the state dict under `prefix` names, in `format`), config.json and our tokenizer. */
async function folder(
  name: string,
  sd: ReturnType<typeof stateDict>,
  prefix: (tensorName: string, i: number) => string,
  file: string,
): Promise<string> {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  const named = sd.tensors.map((t, i) => ({ ...t, name: prefix(t.name, i) + t.name }));
  const bytes = file.endsWith('.safetensors')
    ? encodeSafetensors(
        named.map((t) => ({ ...t, dtype: 'F32' as const })),
        { format: 'pt' },
      )
    : torchSaveZip(named);
  fs.writeFileSync(path.join(dir, file), bytes);
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(sd.json));
  await writeTokenizer(NODE_FS, dir, tok);
  return dir;
}

async function imported(
  from: string,
): Promise<{ layout: string; notes: readonly string[]; config: ModelConfig; logits: Float32Array }> {
  const out = `${from}-run`;
  const res = await importCheckpoint(NODE_FS, { from, out });
  const r = await openRun(NODE_FS, out, createReferenceBackend(), 1);
  const input = Int32Array.from([5, 9, 3, 12, 7, 4, 20, 6]);
  r.model.forward({ B: 1, T: input.length, input, targets: input }, { train: false });
  return { layout: res.layout, notes: res.notes, config: res.config, logits: Float32Array.from(r.model.logits()) };
}

describe.each(['nanogpt', 'hf-gpt2'] as const)('a %s state dict saved through a wrapper', (shape) => {
  const sd = stateDict(shape);

  it.each([
    ['module.', 'pytorch_model.bin'],
    ['module.', 'model.safetensors'],
    ['module._orig_mod.', 'model.pth'],
    ['_orig_mod.module.', 'model.safetensors'],
  ])('%s names in %s import as the bare names do, same logits, prefix said', async (pre, file) => {
    const bare = await imported(await folder(`${shape}-bare-${pre}-${file}`, sd, () => '', file));
    const wrapped = await imported(await folder(`${shape}-wrapped-${pre}-${file}`, sd, () => pre, file));
    expect(bare.layout).toBe(shape);
    expect(wrapped.layout).toBe(shape);
    expect(bare.config).toEqual({ ...sd.config, dropout: 0 });
    expect(wrapped.config).toEqual(bare.config);
    expect(wrapped.logits).toEqual(bare.logits);
    expect(wrapped.notes.join('\n')).toContain(`every tensor name starts with \`${pre}\``);
    expect(bare.notes.join('\n')).not.toMatch(/every tensor name starts with/);
  });

  it.each(['pytorch_model.bin', 'model.safetensors'])(
    'a `module.` prefix on only some names is kept and the file refused (%s)',
    async (file) => {
      const dir = await folder(`${shape}-mixed-${file}`, sd, (_n, i) => (i % 3 === 0 ? '' : 'module.'), file);
      const e = await importCheckpoint(NODE_FS, { from: dir, out: `${dir}-run` }).then(
        () => null,
        (x: unknown) => x,
      );
      expect(EngineError.is(e, 'checkpoint/invalid')).toBe(true);
      expect((e as Error).message).not.toMatch(/is dropped/);
      expect(fs.existsSync(`${dir}-run`)).toBe(false);
    },
  );
});
