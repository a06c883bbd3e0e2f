/**
 * `export --format hf` (lab/interop/exportHf.ts): a Llama-shaped run in Hugging Face's
 * LlamaForCausalLM layout. Loaded by a LlamaForCausalLM forward written out for Debian's torch
 * (scripts/pytorch/minimal_llama.py; transformers is not installed there), it must give
 * the logits of the model it came from to 1e-4, and score the example config.json stores to
 * 1e-4: once from the PyTorch engine's model (so the mapping is checked whatever our engine
 * builds), once from a run our engine trained (skipped while our engine does not build the
 * Llama options: `unbuiltOptions`). A run Llama cannot express is refused in one line,
 * before anything is written.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../../src/engine/config';
import { MODERN_PRESETS, presetConfig, validateConfig } from '../../../../src/engine/config';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { configFromLlamaJson } from '../../../../src/engine/models/hfLlama';
import { unbuiltOptions } from '../../../../src/engine/models/modelParts';
import type { NamedParams } from '../../../../src/engine/models/pytorchNames';
import type { Param } from '../../../../src/engine/models/plan';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { exportRun } from '../../../../src/lab/interop/exportFolder';
import {
  checkLlamaShaped,
  hfLlamaConfig,
  hfLlamaTensors,
  llamaDifferences,
} from '../../../../src/lab/interop/exportHf';
import { PYTHON, TRAINER_DIR, python } from '../pytorch/torchRuns';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

const MINIMAL_LLAMA = path.resolve(__dirname, '../../../../scripts/pytorch/minimal_llama.py');
const SPECIALS = { pad: 0, bos: 1, eos: 2, unk: 3 };
const IDS = [1, 5, 9, 4, 12, 7, 7, 11, 6];

/** Llama's architecture fields (config.ts LLAMA), with a theta and an eps that are not the defaults. */
const LLAMA_ARCH: Partial<ModelConfig> = {
  positional: 'rope',
  normType: 'rmsnorm',
  activation: 'swiglu',
  nKvHeads: 2,
  tieEmbeddings: false,
  bias: false,
  qkvBias: false,
  attnOutBias: false,
  mlpBias: false,
  ropeTheta: 500,
  layerNormEps: 1e-6,
};
const LLAMA = {
  ...presetConfig('decoder-only', 'tiny', 13),
  ...LLAMA_ARCH,
  dModel: 16,
  nHeads: 4,
  nKvHeads: 2,
  dFF: 24,
  nDecoderLayers: 2,
  maxLen: 12,
};

/** minimal_llama.py's logits [1, T, V] of `ids` for the export folder `dir`. */
function llamaLogits(dir: string, ids: readonly number[]): number[][] {
  const out = execFileSync(PYTHON, [MINIMAL_LLAMA, dir, TRAINER_DIR], {
    input: JSON.stringify([ids]),
    encoding: 'utf8',
  });
  return (JSON.parse(out) as number[][][])[0] as number[][];
}

function gap(a: readonly (readonly number[])[], b: readonly (readonly number[])[]): number {
  let g = 0;
  a.forEach((row, t) => row.forEach((x, v) => (g = Math.max(g, Math.abs(x - ((b[t] as number[])[v] as number))))));
  return g;
}

/** Σ log p(ids[t+1] | ids[..t]) from logits of ids[..-1]. */
function logprobSum(logits: readonly (readonly number[])[], ids: readonly number[]): number {
  let sum = 0;
  for (let t = 0; t + 1 < ids.length; t++) {
    const row = logits[t] as number[];
    const m = Math.max(...row);
    const lse = m + Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
    sum += (row[ids[t + 1] as number] as number) - lse;
  }
  return sum;
}

describe('which runs Llama expresses', () => {
  it('Llama-shaped configs pass; every other option is named in one line', () => {
    expect(llamaDifferences(validateConfig(LLAMA))).toEqual([]);
    expect(llamaDifferences(validateConfig({ ...LLAMA, nKvHeads: 0, tieEmbeddings: true, mlpBias: true }))).toEqual([]);
    const nanochat = validateConfig({ ...LLAMA, ...MODERN_PRESETS['nanochat-tiny']?.arch });
    expect(llamaDifferences(nanochat)).toEqual([
      'normScale false',
      'activation relu2 (Llama uses swiglu)',
      'qkNorm',
      'logitSoftCap',
      'embedNorm',
    ]);
    const gpt = presetConfig('decoder-only', 'tiny', 13);
    expect(() => checkLlamaShaped(gpt)).toThrow(
      /^Hugging Face's LlamaForCausalLM cannot express this run \(positional learned .*normType layernorm .*activation gelu .*\); export it with --format pytorch/,
    );
    expect(llamaDifferences(presetConfig('encoder-decoder', 'tiny', 13))).toEqual([
      'an encoder-decoder (Llama is decoder-only)',
    ]);
    for (const o of [{ slidingWindow: 4 }, { rotaryFraction: 0.5 }, { qkvBias: true }, { parallelResidual: true }])
      expect(llamaDifferences(validateConfig({ ...LLAMA, ...o })), JSON.stringify(o)).toHaveLength(1);
    // Gemma 3's layers (issue 30): each named in the one-line list.
    expect(llamaDifferences(validateConfig({ ...LLAMA, postNorms: true }))).toEqual(['postNorms']);
    expect(
      llamaDifferences(validateConfig({ ...LLAMA, slidingWindow: 4, globalEvery: 2, ropeLocalTheta: 100 })),
    ).toEqual(['slidingWindow', 'globalEvery', 'ropeLocalTheta']);
  });

  it("writes RoPE scaling as the Hub's rope_scaling and reads it back as it was", () => {
    for (const o of [
      { ropeScaling: 'llama3', ropeScalingFactor: 32, ropeLowFreqFactor: 1, ropeHighFreqFactor: 4 },
      { ropeScaling: 'linear', ropeScalingFactor: 4 },
    ] as const) {
      const cfg = validateConfig({ ...LLAMA, ...o, ropeOriginalMaxLen: 8 });
      expect(llamaDifferences(cfg)).toEqual([]);
      const json = hfLlamaConfig(cfg, SPECIALS);
      expect((json['rope_scaling'] as Record<string, unknown>)['rope_type']).toBe(o.ropeScaling);
      const back = configFromLlamaJson(JSON.parse(JSON.stringify(json)) as Record<string, unknown>, cfg);
      expect(back).toEqual(cfg);
    }
    expect(hfLlamaConfig(validateConfig(LLAMA), SPECIALS)['rope_scaling']).toBeNull();
  });

  it('refuses a GPT-2-style run before writing anything', async () => {
    const r = await trainTiny(tinySpec(await tinyDocuments()));
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'al-hf-'));
    await expect(exportRun(NODE_FS, r, out, { format: 'hf' })).rejects.toThrow(/cannot express this run/);
    expect(fs.readdirSync(out)).toEqual([]);
  });
});

describe('a Llama-shaped model in LlamaForCausalLM layout', () => {
  it.each([
    ['grouped-query, untied', {}],
    ['tied, with biases', { tieEmbeddings: true, qkvBias: true, attnOutBias: true, mlpBias: true, nKvHeads: 1 }],
  ])("gives the PyTorch engine's logits to 1e-4 (%s)", (_name, extra) => {
    const cfg = validateConfig({ ...LLAMA, ...extra });
    // The trainer's model with random weights: its tensors under our names, and its logits.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-hf-'));
    const ours = path.join(dir, 'ours.safetensors');
    const theirs = JSON.parse(
      python(
        `import json, torch
from attention_lab_trainer.files import ParamMap, encode_safetensors
from attention_lab_trainer.model import build_model
cfg = json.loads(sys.stdin.read())
m = build_model(cfg).eval()
g = torch.Generator().manual_seed(7)
with torch.no_grad():
    for p in m.parameters():
        p.copy_(p + 0.3 * torch.randn(p.shape, generator=g))
C, KV = cfg["dModel"], (cfg["nKvHeads"] or cfg["nHeads"]) * cfg["dModel"] // cfg["nHeads"]
params = []
for n, p in m.named_parameters():
    parts = [("q", C), ("k", KV), ("v", KV)] if ".c_attn." in n else [(None, p.shape[0])]
    params += [{"name": n if x is None else n.replace(".c_attn.", f".c_attn_{x}."), "shape": [r, *p.shape[1:]]} for x, r in parts]
pm = ParamMap(m, params)
open(${JSON.stringify(ours)}, "wb").write(encode_safetensors(pm.ours({p: p for p in m.parameters()}), {}))
with torch.no_grad():
    print(json.dumps(m(torch.tensor([${JSON.stringify(IDS)}]))[0].tolist()))`,
        JSON.stringify(cfg),
      ),
    ) as number[][];
    const file = decodeSafetensors(new Uint8Array(fs.readFileSync(ours)), ours);
    const model: NamedParams = {
      config: cfg,
      paramList: [],
      headW: null as unknown as Param,
      param(name: string): Param {
        const t = file.tensors.get(name);
        if (!t) throw new Error(`no ${name}`);
        return { name, shape: t.shape, data: t.data } as unknown as Param;
      },
    };
    const { bytes, tensors } = hfLlamaTensors(model);
    fs.writeFileSync(path.join(dir, 'model.safetensors'), bytes);
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(hfLlamaConfig(cfg, SPECIALS)));
    const names = [...decodeSafetensors(bytes, 'hf').tensors.keys()];
    expect(names).toHaveLength(tensors);
    expect(names).toContain('model.layers.1.mlp.gate_proj.weight');
    expect(names.includes('lm_head.weight')).toBe(!cfg.tieEmbeddings);
    expect(names.filter((n) => n.endsWith('.bias')).length).toBe(cfg.qkvBias ? 2 * 7 : 0);
    const got = llamaLogits(dir, IDS);
    expect(Math.max(...got.flat().map(Math.abs))).toBeGreaterThan(0.5);
    expect(gap(got, theirs)).toBeLessThan(1e-4);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

const llamaRun: ModelConfig = validateConfig({ ...LLAMA, vocabSize: 40, dModel: 32, dFF: 64, maxLen: 32 });
const unbuilt = unbuiltOptions(llamaRun);

describe.skipIf(unbuilt.length > 0)(
  `a run our engine trained, exported with --format hf${unbuilt.length ? ` (our engine does not build ${unbuilt.join(', ')} yet)` : ''}`,
  () => {
    it('loads as LlamaForCausalLM with our logits and the example score to 1e-4', async () => {
      const spec = tinySpec(await tinyDocuments());
      const r = await trainTiny({
        ...spec,
        model: { ...spec.model, overrides: { ...spec.model.overrides, ...LLAMA_ARCH, dFF: 64, maxLen: 32 } },
      });
      expect(llamaDifferences(r.model.config)).toEqual([]);
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'al-hf-'));
      const res = await exportRun(NODE_FS, r, out, { format: 'hf', text: 'the dog sat on the mat.' });
      expect(fs.readdirSync(res.dir).sort()).toEqual([
        'README.md',
        'attention_lab_tokenizer.json',
        'config.json',
        'lab_tokenizers.py',
        'model.safetensors',
      ]);
      const config = JSON.parse(fs.readFileSync(path.join(res.dir, 'config.json'), 'utf8')) as Record<
        string,
        unknown
      > & { attention_lab: { example: { ids: number[]; logprob_sum: number; tokens: number } } };
      expect(config).toMatchObject({
        architectures: ['LlamaForCausalLM'],
        hidden_size: 32,
        num_key_value_heads: 2,
        intermediate_size: 64,
        rope_theta: 500,
        rms_norm_eps: 1e-6,
        tie_word_embeddings: false,
      });
      const ex = config.attention_lab.example;
      expect(ex.ids.length - 1).toBe(ex.tokens);
      const got = llamaLogits(res.dir, ex.ids.slice(0, -1));
      expect(Math.abs(logprobSum(got, ex.ids) - ex.logprob_sum)).toBeLessThan(1e-4);
      // Our logits of the same ids, from the run as our engine opened it.
      const T = ex.ids.length - 1;
      r.model.forward(
        { B: 1, T, input: Int32Array.from(ex.ids.slice(0, -1)), targets: Int32Array.from(ex.ids.slice(1)) },
        { train: false },
      );
      const flat = r.model.logits();
      const V = r.model.config.vocabSize;
      const mine = Array.from({ length: T }, (_, t) => Array.from(flat.subarray(t * V, (t + 1) * V)));
      expect(gap(got, mine)).toBeLessThan(1e-4);
      expect(fs.readFileSync(path.join(res.dir, 'README.md'), 'utf8')).toContain(
        'LlamaForCausalLM.from_pretrained(".", torch_dtype=torch.float32)',
      );
    });
  },
);

const OTHERS: { name: string; arch: Partial<ModelConfig> }[] = [
  {
    name: 'heads of 12 over dModel / nHeads = 8, scores scaled by 0.5',
    arch: { ...LLAMA_ARCH, headDim: 12, attnScale: 0.5 },
  },
  {
    name: 'nanochat-shaped',
    arch: {
      ...LLAMA_ARCH,
      nKvHeads: 0,
      activation: 'relu2',
      normScale: false,
      qkNorm: true,
      logitSoftCap: 15,
      embedNorm: true,
    },
  },
  {
    name: 'ALiBi, GQA, a window, soft-capped scores, a parallel residual, GeGLU',
    arch: {
      ...LLAMA_ARCH,
      positional: 'alibi',
      slidingWindow: 8,
      attnSoftCap: 5,
      parallelResidual: true,
      activation: 'geglu',
    },
  },
  {
    name: "Gemma 3's layers: sandwich norms, one global layer of two, a local RoPE θ",
    arch: {
      ...LLAMA_ARCH,
      activation: 'geglu',
      qkNorm: true,
      embedScale: true,
      postNorms: true,
      slidingWindow: 4,
      globalEvery: 2,
      ropeLocalTheta: 100,
    },
  },
];

describe.each(OTHERS)('a run Llama cannot express ($name)', ({ arch }) => {
  const missing = unbuiltOptions(validateConfig({ ...LLAMA, ...arch }));
  it.skipIf(missing.length > 0)(
    'exports with --format pytorch, and the reference.py it carries scores the example as our engine did',
    async () => {
      const spec = tinySpec(await tinyDocuments());
      const r = await trainTiny({ ...spec, model: { ...spec.model, overrides: { ...spec.model.overrides, ...arch } } });
      expect(llamaDifferences(r.model.config).length).toBeGreaterThan(0);
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'al-hf-'));
      await expect(exportRun(NODE_FS, r, out, { format: 'hf' })).rejects.toThrow(/--format pytorch/);
      const res = await exportRun(NODE_FS, r, out, { text: 'the dog sat on the mat.' });
      const got = execFileSync(PYTHON, ['score_export.py', '.'], {
        cwd: res.dir,
        encoding: 'utf8',
        env: { PATH: process.env['PATH'] ?? '', PYTHONNOUSERSITE: '1' },
      });
      expect(got).toMatch(new RegExp(`^${res.example?.tokens} tokens, total log p`));
      expect(Number(/difference ([\d.e+-]+)/.exec(got)?.[1])).toBeLessThan(1e-4);
    },
  );
});
