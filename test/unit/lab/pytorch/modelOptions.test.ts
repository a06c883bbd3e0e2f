/**
 * The PyTorch engine's model builds every option of today's transformers as our engine does:
 * for each option alone (on a decoder-only and on an encoder-decoder model) and for the
 * Llama- and nanochat-shaped combinations, our model's weights (random, norm weights and
 * biases included, so a misplaced scale shows) go through the trainer's own ParamMap into
 * python/attention_lab_trainer/model.py, and its logits must equal ours to 1e-4 (float32,
 * reference backend). The trainer's model must also list exactly our parameters (ParamMap
 * refuses a missing or extra one), so checkpoints move between the engines.
 *
 * Options our engine does not build yet (`unbuiltOptions`) are skipped, case by case, from
 * that list — never by name here — so each case runs as soon as the engine builds it.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import { presetConfig, validateConfig } from '../../../../src/engine/config';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';
import type { Batch } from '../../../../src/engine/models/inputs';
import { unbuiltOptions } from '../../../../src/engine/models/modelParts';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { python } from './torchRuns';

const SMALL = { dModel: 16, nHeads: 4, dFF: 24, nDecoderLayers: 2, maxLen: 12, dropout: 0 } as const;
const GPT = { ...presetConfig('decoder-only', 'tiny', 13), ...SMALL };
const ENCDEC = { ...presetConfig('encoder-decoder', 'tiny', 13, 11), ...SMALL, nEncoderLayers: 2 };

/** Each option alone (the values issue 29 names), as `--set` would give it. */
const OPTIONS: Partial<ModelConfig>[] = [
  { positional: 'rope' },
  { positional: 'rope', rotaryFraction: 0.5, ropeTheta: 500 },
  { positional: 'alibi' },
  { positional: 'alibi', dModel: 24, nHeads: 6 }, // ALiBi's slopes for a head count that is not a power of two
  { positional: 'none' },
  { normType: 'rmsnorm' },
  { normType: 'rmsnorm', normScale: false },
  { qkNorm: true },
  { activation: 'relu2' },
  { activation: 'silu' },
  { activation: 'swiglu' },
  { activation: 'geglu' },
  { nKvHeads: 2 },
  { nKvHeads: 1 },
  { qkvBias: false },
  { attnOutBias: false },
  { mlpBias: false },
  { bias: false, qkvBias: true },
  // Caps small enough to bend this small model's scores and logits (|s| is about 0.1 here).
  { attnSoftCap: 0.05 },
  { logitSoftCap: 0.5 },
  { slidingWindow: 3 },
  { parallelResidual: true },
  { embedNorm: true },
  // Issue 30: heads wider than dModel / nHeads, and a scale large enough to bend the scores.
  { headDim: 6 },
  { attnScale: 3 },
];

/** Llama's and nanochat's decoders (config.ts LLAMA, NANOCHAT) at this file's size. */
const LLAMA: Partial<ModelConfig> = {
  positional: 'rope',
  normType: 'rmsnorm',
  activation: 'swiglu',
  nKvHeads: 2,
  tieEmbeddings: false,
  bias: false,
  qkvBias: false,
  attnOutBias: false,
  mlpBias: false,
};
const NANOCHAT: Partial<ModelConfig> = {
  ...LLAMA,
  nKvHeads: 0,
  activation: 'relu2',
  normScale: false,
  qkNorm: true,
  logitSoftCap: 15,
  embedNorm: true,
};

interface Case {
  readonly name: string;
  readonly cfg: ModelConfig;
}

function label(o: Partial<ModelConfig>): string {
  return Object.entries(o)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

const CASES: Case[] = [
  { name: 'decoder-only as before', cfg: validateConfig(GPT) },
  { name: 'encoder-decoder as before', cfg: validateConfig(ENCDEC) },
  ...OPTIONS.map((o) => ({ name: `decoder-only ${label(o)}`, cfg: validateConfig({ ...GPT, ...o }) })),
  ...OPTIONS.filter((o) => o.positional !== 'alibi' && !o.parallelResidual).map((o) => ({
    name: `encoder-decoder ${label(o)}`,
    cfg: validateConfig({ ...ENCDEC, ...o }),
  })),
  {
    name: 'encoder-decoder pre-norm parallelResidual',
    cfg: validateConfig({ ...ENCDEC, norm: 'pre', parallelResidual: true }),
  },
  { name: 'llama-shaped', cfg: validateConfig({ ...GPT, ...LLAMA }) },
  {
    name: 'llama-shaped, a quarter rotated, a window',
    cfg: validateConfig({ ...GPT, ...LLAMA, rotaryFraction: 0.5, slidingWindow: 4 }),
  },
  { name: 'nanochat-shaped', cfg: validateConfig({ ...GPT, ...NANOCHAT }) },
  {
    name: 'qwen3-shaped (4 heads of 8 over dModel 16)',
    cfg: validateConfig({ ...GPT, ...LLAMA, qkNorm: true, headDim: 8 }),
  },
  // Issue 30: Gemma 3's layers (sandwich norms, one global layer of two with its own RoPE θ).
  {
    name: 'gemma3-shaped (postNorms, globalEvery 2, ropeLocalTheta)',
    cfg: validateConfig({
      ...GPT,
      ...LLAMA,
      activation: 'geglu',
      qkNorm: true,
      headDim: 6,
      attnScale: 0.25,
      embedScale: true,
      postNorms: true,
      slidingWindow: 3,
      globalEvery: 2,
      ropeLocalTheta: 50,
    }),
  },
  {
    name: 'encoder-decoder pre-norm postNorms, globalEvery 2, ropeLocalTheta',
    cfg: validateConfig({
      ...ENCDEC,
      positional: 'rope',
      norm: 'pre',
      postNorms: true,
      slidingWindow: 2,
      globalEvery: 2,
      ropeLocalTheta: 50,
    }),
  },
  // Issue 30: RoPE scaling, strong enough to matter over 10 positions of a head of 4 (θ 10000).
  {
    name: 'llama3 rope scaling',
    cfg: validateConfig({
      ...GPT,
      ...LLAMA,
      ropeScaling: 'llama3',
      ropeScalingFactor: 8,
      ropeLowFreqFactor: 1,
      ropeHighFreqFactor: 4,
      ropeOriginalMaxLen: 64,
    }),
  },
  {
    name: 'gemma3-shaped, linear rope scaling of the global layers',
    cfg: validateConfig({
      ...GPT,
      ...LLAMA,
      slidingWindow: 3,
      globalEvery: 2,
      ropeScaling: 'linear',
      ropeScalingFactor: 4,
    }),
  },
  {
    name: 'every option at once',
    cfg: validateConfig({
      ...GPT,
      ...LLAMA,
      activation: 'geglu',
      qkNorm: true,
      qkvBias: true,
      attnSoftCap: 2,
      logitSoftCap: 5,
      slidingWindow: 5,
      parallelResidual: true,
      embedNorm: true,
      nKvHeads: 1,
    }),
  },
];

/** Python: for each job, builds the trainer's model, loads our tensors through ParamMap, writes its logits. */
const RUN = `
import json, torch
from attention_lab_trainer.files import ParamMap, encode_safetensors, read_safetensors
from attention_lab_trainer.model import build_model
for job in json.load(sys.stdin):
    model = build_model(job["config"])
    model.eval()
    ParamMap(model, job["params"]).load(read_safetensors(job["weights"])[0])
    ids = lambda k: torch.tensor(job[k], dtype=torch.int64).view(job["B"], -1)
    with torch.no_grad():
        encdec = job["config"]["kind"] == "encoder-decoder"
        logits = model(ids("src"), ids("input")) if encdec else model(ids("input"))
    open(job["out"], "wb").write(encode_safetensors([("logits", logits)], {}))
`;

function ids(rng: Rng, n: number, vocab: number): Int32Array {
  return Int32Array.from({ length: n }, () => 4 + Math.floor(rng.next() * (vocab - 4)));
}

/** Our logits for random weights and ids, and the job that asks the trainer's model for its own. */
function ourSide(cfg: ModelConfig, dir: string, i: number): { ours: Float32Array; job: Record<string, unknown> } {
  const B = 2;
  const T = cfg.maxLen - 2;
  const S = cfg.kind === 'encoder-decoder' ? 7 : 0;
  const model = new Transformer(cfg, { maxBatch: B, maxLen: T, ...(S ? { maxSrcLen: S } : {}) }).bind(
    createReferenceBackend(),
  );
  const rng = new Rng(29);
  model.initialize(rng);
  for (const p of model.paramList) for (let j = 0; j < p.size; j++) p.data[j] += 0.2 * (rng.next() - 0.5);
  const input = ids(rng, B * T, cfg.vocabSize);
  const src = S ? ids(rng, B * S, cfg.srcVocabSize) : null;
  const batch: Batch = { B, T, input, targets: input, ...(src ? { S, src } : {}) };
  model.forward(batch, { train: false });
  const weights = path.join(dir, `weights-${i}.safetensors`);
  fs.writeFileSync(
    weights,
    encodeSafetensors(model.paramList.map((p) => ({ name: p.name, dtype: 'F32', shape: p.shape, data: p.data }))),
  );
  const params = model.paramList.map((p) => ({ name: p.name, shape: p.shape }));
  const out = path.join(dir, `logits-${i}.safetensors`);
  return {
    ours: Float32Array.from(model.logits()),
    job: { config: cfg, params, weights, out, B, input: [...input], src: src ? [...src] : [] },
  };
}

describe("the PyTorch engine's model computes our logits for every option", () => {
  it('every case is a valid config that differs from the plain model', () => {
    expect(new Set(CASES.map((c) => JSON.stringify(c.cfg))).size).toBe(CASES.length);
  });

  const built = CASES.filter((c) => unbuiltOptions(c.cfg).length === 0);
  const waiting = CASES.filter((c) => unbuiltOptions(c.cfg).length > 0).map((c) => ({
    ...c,
    unbuilt: unbuiltOptions(c.cfg).join(', '),
  }));
  // One Python process for every case (importing torch costs seconds on this machine).
  const both = new Map<string, { ours: Float32Array; theirs: Float32Array }>();
  beforeAll(() => {
    if (built.length === 0) return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-model-options-'));
    const sides = built.map((c, i) => ourSide(c.cfg, dir, i));
    python(RUN, JSON.stringify(sides.map((s) => s.job)));
    built.forEach((c, i) => {
      const side = sides[i] as (typeof sides)[number];
      const out = side.job['out'] as string;
      const t = decodeSafetensors(new Uint8Array(fs.readFileSync(out)), out).tensors.get('logits');
      if (!t) throw new Error(`the trainer wrote no logits for ${c.name}`);
      expect(t.shape.reduce((a, b) => a * b, 1)).toBe(side.ours.length);
      both.set(c.name, { ours: side.ours, theirs: t.data as Float32Array });
    });
    fs.rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it.each(built)('$name', ({ name }) => {
    const { ours, theirs } = both.get(name) as { ours: Float32Array; theirs: Float32Array };
    expect(theirs.length).toBe(ours.length);
    let worst = 0;
    let scale = 0;
    for (let i = 0; i < ours.length; i++) {
      worst = Math.max(worst, Math.abs((ours[i] as number) - (theirs[i] as number)));
      scale = Math.max(scale, Math.abs(ours[i] as number));
    }
    expect(scale).toBeGreaterThan(0.1);
    expect(worst).toBeLessThan(1e-4);
  });

  // Skipped, not passed: each runs once our engine builds what it lacks.
  it.skip.each(waiting)('$name (our engine does not build $unbuilt yet)', () => {});
});
