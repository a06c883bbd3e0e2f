/**
 * Import refuses, before it plans or reads anything, what the checkpoint's files say that
 * cannot be true: sizes past the config's bounds in the metadata (a 1e6-layer model was
 * planned layer by layer before), and config.json fields that contradict the weights'
 * shapes or are not numbers (they were skipped without a word before).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { presetConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { writeFile } from '../../../../src/lab/files/labFs';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { pytorchConfig, pytorchTensors } from '../../../../src/lab/interop/exportPytorch';
import { writeTokenizer } from '../../../../src/lab/runs/tokenizerFile';
import { nodeTestFs } from '../files/fileSystems';

const tok = trainCharTokenizer(['the quick brown fox jumps over the lazy dog 0123456789']);
const c = presetConfig('decoder-only', 'tiny', tok.vocabSize);
const t = nodeTestFs();
const { fs } = t;
let root = '';
let n = 0;

beforeAll(async () => {
  root = await t.dir();
});

/** A folder holding the tiny model's weights as PyTorch saves them (no metadata), `config` as config.json, and our tokenizer. */
async function folder(config: Record<string, unknown> | null, metadata?: Record<string, string>): Promise<string> {
  const model = new Transformer(c, { maxBatch: 1 }).bind(createReferenceBackend());
  model.initialize(new Rng(3));
  const dir = fs.join(root, `ckpt-${n++}`);
  const f = decodeSafetensors(pytorchTensors(model).bytes);
  const tensors = [...f.tensors].map(([name, x]) => ({ name, dtype: x.dtype, shape: x.shape, data: x.data }));
  await writeFile(fs, fs.join(dir, 'model.safetensors'), encodeSafetensors(tensors, metadata ?? { format: 'pt' }));
  if (config) await writeFile(fs, fs.join(dir, 'config.json'), JSON.stringify(config));
  await writeTokenizer(fs, dir, tok);
  return dir;
}

async function refusal(dir: string): Promise<string> {
  try {
    await importCheckpoint(fs, { from: dir, out: fs.join(root, `run-${n++}`) });
  } catch (e) {
    if (EngineError.is(e)) return e.message;
    throw e;
  }
  throw new Error('expected the import to be refused');
}

describe('import bounds and config.json contradictions', () => {
  it('imports the consistent folder (the cases below differ from it in one field)', async () => {
    const res = await importCheckpoint(fs, { from: await folder(pytorchConfig(c)), out: fs.join(root, 'good-run') });
    expect(res.config.dModel).toBe(c.dModel);
  });

  it('refuses metadata that says nDecoderLayers 1e6 before planning a layer', async () => {
    const dir = await folder(null, {
      format: 'pt',
      attention_lab_config: JSON.stringify({ ...c, nDecoderLayers: 1e6 }),
    });
    expect(await refusal(dir)).toMatch(/attention_lab_config .*nDecoderLayers 1000000 is larger than the 1024/);
  });

  it('refuses a header that names a million blocks, in one line', async () => {
    const dir = await folder(pytorchConfig(c));
    const file = fs.join(dir, 'model.safetensors');
    const f = decodeSafetensors(await fs.readFile(file));
    const tensors = [...f.tensors].map(([name, x]) => ({ name, dtype: x.dtype, shape: x.shape, data: x.data }));
    const one = { dtype: 'F32' as const, shape: [1], data: new Float32Array(1) };
    for (let i = 0; i < 200_000; i++) tensors.push({ name: `transformer.h.${i}.x`, ...one });
    await writeFile(fs, file, encodeSafetensors(tensors, { format: 'pt' }));
    expect(await refusal(dir)).toMatch(
      /model\.safetensors: The checkpoint has blocks up to transformer\.h\.199999, more than the 1024 layers/,
    );
  });

  it.each([
    [{ n_embd: 128 }, /config\.json says n_embd 128 but transformer\.wte\.weight gives 64/],
    [{ vocab_size: 999 }, /config\.json says vocab_size 999 but transformer\.wte\.weight gives/],
    [{ block_size: 4096 }, /config\.json says block_size 4096 but transformer\.wpe\.weight gives 64/],
    [{ n_positions: 1024 }, /config\.json says n_positions 1024 but transformer\.wpe\.weight gives 64/],
    [{ n_inner: 17 }, /config\.json says n_inner 17 but transformer\.h\.0\.mlp\.c_fc\.weight gives 256/],
    [{ layer_norm_epsilon: 'tiny' }, /config\.json's layer_norm_epsilon is "tiny", not a number/],
    [{ n_head: '4' }, /config\.json's n_head is "4", not a number/],
  ])('refuses config.json with %o', async (over, re) => {
    expect(await refusal(await folder({ ...pytorchConfig(c), ...over }))).toMatch(re);
  });

  it("takes Hugging Face's null n_inner as unset", async () => {
    const res = await importCheckpoint(fs, {
      from: await folder({ ...pytorchConfig(c), n_inner: null }),
      out: fs.join(root, 'null-inner-run'),
    });
    expect(res.config.dFF).toBe(c.dFF);
  });
});
