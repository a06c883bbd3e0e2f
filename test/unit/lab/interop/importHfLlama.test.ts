/**
 * The import of `export --format hf` (engine/models/hfLlama.ts, importLayouts.ts), and the
 * export checked against transformers (the export's own tests: exportHf.test.ts):
 *
 * - the golden (test/golden/llama-export, scripts/makeLlamaExportFixture.mjs): a tiny Llama-shaped
 *   export that transformers' LlamaForCausalLM scored; our engine, importing that folder, scores
 *   the example to 1e-4 of transformers, and a minimal Llama forward on Debian's torch (no
 *   transformers) reproduces the golden file;
 * - our own export comes back exactly: the same config, and re-exporting gives the same bytes;
 * - a tied model has no lm_head.weight; what Llama cannot express is refused before anything
 *   is written; config.json fields Llama's import does not take are refused by name.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { listNames } from '../../../../src/lab/files/labFs';
import { openRun } from '../../../../src/lab/inference/openRun';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { scoreText } from '../../../../src/lab/inference/score';
import { exportRun } from '../../../../src/lab/interop/exportFolder';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { nodeTestFs } from '../files/fileSystems';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

const GOLDEN = path.resolve(__dirname, '../../../golden/llama-export');
const SCRIPT = path.resolve(__dirname, '../../../../scripts/pytorch/make_llama_export_golden.py');
const TOL = 1e-4;

interface Golden {
  readonly text: string;
  readonly ids: number[];
  readonly logprobs: number[];
}

const golden = JSON.parse(fs.readFileSync(path.join(GOLDEN, 'expected.json'), 'utf8')) as Golden;
const t = nodeTestFs();

async function importInto(from: string): Promise<OpenRun> {
  const out = path.join(await t.dir(), 'imported');
  await importCheckpoint(NODE_FS, { from, out });
  return openRun(NODE_FS, out, createReferenceBackend(), 2);
}

/** A copy of the golden export with config.json changed by `edit`. */
async function editedCopy(edit: (cfg: Record<string, unknown>) => void): Promise<string> {
  const dir = path.join(await t.dir(), 'edited');
  fs.cpSync(path.join(GOLDEN, 'tiny'), dir, { recursive: true });
  const file = path.join(dir, 'config.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  edit(cfg);
  fs.writeFileSync(file, JSON.stringify(cfg));
  return dir;
}

const LLAMA = {
  norm: 'pre',
  positional: 'rope',
  normType: 'rmsnorm',
  activation: 'swiglu',
  embedScale: false,
  dropout: 0,
  nHeads: 4,
  nKvHeads: 2,
} as const;

describe("Hugging Face Llama export: transformers' golden", () => {
  it("imports the golden export and scores its example as transformers' LlamaForCausalLM did, to 1e-4", async () => {
    const r = await importInto(path.join(GOLDEN, 'tiny'));
    expect(r.run.imported?.layout).toBe('hf-llama');
    const bos = r.tok.specialIds.bos;
    expect([bos, ...r.tok.encode(golden.text)]).toEqual(golden.ids);
    const { logprobs } = scoreText(r, null, golden.text).output;
    expect(logprobs).toHaveLength(golden.logprobs.length);
    const diff = Math.max(...logprobs.map((x, i) => Math.abs(x - (golden.logprobs[i] as number))));
    expect(diff).toBeLessThan(TOL);
    // Not a near-uniform model: the golden's tokens are far from log(1/V) apart.
    expect(Math.max(...golden.logprobs) - Math.min(...golden.logprobs)).toBeGreaterThan(1);
  });

  const torch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
  it.skipIf(!torch)("a minimal Llama forward on Debian's torch (no transformers) reproduces the golden", () => {
    const res = spawnSync(
      '/usr/bin/python3',
      [SCRIPT, path.join(GOLDEN, 'tiny'), '--check', path.join(GOLDEN, 'expected.json')],
      { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', PYTHONNOUSERSITE: '1' } },
    );
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(new RegExp(`^${golden.logprobs.length} tokens, .* largest difference`));
    expect(res.status).toBe(0);
  });
});

describe('Hugging Face Llama export and import of our own runs', () => {
  let untied: OpenRun;
  let tied: OpenRun;
  let wide: OpenRun;
  beforeAll(async () => {
    const docs = await tinyDocuments(t);
    const spec = (o: Record<string, unknown>): ReturnType<typeof tinySpec> => {
      const s = tinySpec(docs, 4, 16);
      return { ...s, model: { ...s.model, overrides: { ...s.model.overrides, ...LLAMA, ...o } } };
    };
    untied = await trainTiny(spec({ tieEmbeddings: false, qkvBias: true, attnOutBias: true, mlpBias: true }), t);
    tied = await trainTiny(
      spec({ tieEmbeddings: true, bias: false, qkvBias: false, attnOutBias: false, mlpBias: false, ropeTheta: 500000 }),
      t,
    );
    wide = await trainTiny(spec({ headDim: 12, bias: false, qkvBias: false, attnOutBias: false }), t);
  });

  it('round-trips exactly: the same config, the same score, and the same files when exported again', async () => {
    for (const r of [untied, tied, wide]) {
      const first = await exportRun(NODE_FS, r, await t.dir(), { format: 'hf', text: 'the cat sat' });
      const back = await importInto(first.dir);
      expect(back.model.config).toEqual(r.model.config);
      expect(scoreText(back, null, 'the dog sat on the log').output.logprobs).toEqual(
        scoreText(r, null, 'the dog sat on the log').output.logprobs,
      );
      const again = await exportRun(NODE_FS, back, await t.dir(), { format: 'hf', text: 'the cat sat' });
      const read = (d: string): Buffer => fs.readFileSync(path.join(d, 'model.safetensors'));
      expect(read(again.dir).equals(read(first.dir))).toBe(true);
      const cfg = (d: string): Record<string, unknown> => {
        const { attention_lab: _lab, ...hf } = JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8'));
        return hf as Record<string, unknown>;
      };
      expect(cfg(again.dir)).toEqual(cfg(first.dir));
    }
  });

  it("writes LlamaForCausalLM's names and config fields; a tied model has no lm_head.weight", async () => {
    const res = await exportRun(NODE_FS, tied, await t.dir(), { format: 'hf' });
    expect((await listNames(NODE_FS, res.dir)).sort()).toEqual([
      'README.md',
      'attention_lab_tokenizer.json',
      'config.json',
      'lab_tokenizers.py',
      'model.safetensors',
    ]);
    const st = decodeSafetensors(new Uint8Array(fs.readFileSync(path.join(res.dir, 'model.safetensors'))));
    const names = [...st.tensors.keys()];
    expect(names).not.toContain('lm_head.weight');
    expect(names).toContain('model.layers.1.mlp.gate_proj.weight');
    expect(st.tensors.get('model.layers.0.self_attn.k_proj.weight')?.shape).toEqual([16, 32]); // 2 kv heads of 8
    expect(names.filter((n) => n.endsWith('.bias'))).toEqual([]);
    expect(st.metadata['format']).toBe('pt');
    const cfg = JSON.parse(fs.readFileSync(path.join(res.dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(cfg).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      hidden_size: 32,
      intermediate_size: 64,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 8,
      hidden_act: 'silu',
      rope_theta: 500000,
      tie_word_embeddings: true,
      attention_bias: false,
      mlp_bias: false,
      bos_token_id: 1,
      eos_token_id: 2,
      pad_token_id: 0,
      torch_dtype: 'float32',
    });
    const readme = fs.readFileSync(path.join(res.dir, 'README.md'), 'utf8');
    expect(readme).toContain('LlamaForCausalLM.from_pretrained(".", torch_dtype=torch.float32)');
    expect(readme).toContain('load_export_tokenizer');
  });

  it('writes headDim as head_dim (q_proj [H·D, C]); a foreign config.json with that head_dim imports the same model', async () => {
    const res = await exportRun(NODE_FS, wide, await t.dir(), { format: 'hf' });
    const file = path.join(res.dir, 'config.json');
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(cfg).toMatchObject({ hidden_size: 32, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 12 });
    const st = decodeSafetensors(new Uint8Array(fs.readFileSync(path.join(res.dir, 'model.safetensors'))));
    expect(st.tensors.get('model.layers.0.self_attn.q_proj.weight')?.shape).toEqual([48, 32]);
    expect(st.tensors.get('model.layers.0.self_attn.o_proj.weight')?.shape).toEqual([32, 48]);
    delete cfg['attention_lab'];
    fs.writeFileSync(file, JSON.stringify(cfg));
    const back = await importInto(res.dir);
    expect(back.model.config.headDim).toBe(12);
    expect(scoreText(back, null, 'the dog sat').output.logprobs).toEqual(
      scoreText(wide, null, 'the dog sat').output.logprobs,
    );
  });

  it('refuses attnScale other than 1/√head_dim (Llama has no field for it), naming it', async () => {
    const spec = tinySpec(await tinyDocuments(t), 1, 16);
    const overrides = { ...spec.model.overrides, ...LLAMA, attnScale: 0.5 };
    const r = await trainTiny({ ...spec, model: { ...spec.model, overrides } }, t);
    await expect(exportRun(NODE_FS, r, await t.dir(), { format: 'hf' })).rejects.toThrow(
      /cannot express this run \(attnScale 0\.5 \(Llama scales the scores by 1\/√head_dim\)\)/,
    );
  });

  it('refuses a model Llama cannot express in one line naming what, and writes nothing', async () => {
    const gpt = await trainTiny(tinySpec(await tinyDocuments(t), 2, 16), t);
    const parent = await t.dir();
    await expect(exportRun(NODE_FS, gpt, parent, { format: 'hf' })).rejects.toThrow(
      /^Hugging Face's LlamaForCausalLM cannot express this run \(.*normType layernorm.*activation gelu.*\); export it with --format pytorch/,
    );
    expect(fs.readdirSync(parent)).toEqual([]);
  });
});

describe('Hugging Face Llama import refuses what it cannot take, by name', () => {
  it.each([
    [
      'rope_scaling of a type not built',
      (c: Record<string, unknown>) => (c['rope_scaling'] = { rope_type: 'yarn', factor: 8 }),
      /config\.json's rope_scaling\.rope_type is "yarn"; Attention Lab builds default, linear and llama3 RoPE/,
    ],
    [
      'rope_scaling that disagrees with attention_lab.config',
      (c: Record<string, unknown>) => (c['rope_scaling'] = { rope_type: 'linear', factor: 8 }),
      /Llama fields give ropeScaling "linear" but its attention_lab\.config says "none"/,
    ],
    ['hidden_act', (c: Record<string, unknown>) => (c['hidden_act'] = 'gelu'), /config\.json's hidden_act is "gelu"/],
    [
      'a head_dim that disagrees with attention_lab.config',
      (c: Record<string, unknown>) => (c['head_dim'] = 16),
      /Llama fields give headDim 16 but its attention_lab\.config says/,
    ],
    ['pretraining_tp', (c: Record<string, unknown>) => (c['pretraining_tp'] = 2), /pretraining_tp is 2/],
    [
      'a Llama field that disagrees with attention_lab.config',
      (c: Record<string, unknown>) => (c['rope_theta'] = 10000),
      /Llama fields give ropeTheta 10000 but its attention_lab\.config says 1000/,
    ],
    [
      'a config.json without LlamaForCausalLM',
      (c: Record<string, unknown>) => {
        c['architectures'] = ['GPT2LMHeadModel'];
        c['model_type'] = 'gpt2';
      },
      /Llama's tensor names .* no config\.json with architectures \["LlamaForCausalLM"\]/,
    ],
  ])('%s', async (_name, edit, message) => {
    await expect(importInto(await editedCopy(edit))).rejects.toThrow(message);
  });

  it("imports a Llama config.json without our block (a foreign Llama's) as the same model", async () => {
    const dir = await editedCopy((c) => delete c['attention_lab']);
    const r = await importInto(dir);
    const { logprobs } = scoreText(r, null, golden.text).output;
    expect(Math.max(...logprobs.map((x, i) => Math.abs(x - (golden.logprobs[i] as number))))).toBeLessThan(TOL);
  });
});
