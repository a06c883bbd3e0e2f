/**
 * The architecture options for people (src/common/architecture.ts): every option of the
 * engine's config has a description naming models that use it (and package.json's settings say
 * the same words), values read as names ("RoPE θ 10000", "RMSNorm (no scale)", "SwiGLU",
 * "GQA 4 q / 2 kv heads"), and a query head names the key/value head the engine's attention
 * reads for it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ARCHITECTURE_OPTIONS,
  GATED,
  OPTION_INFO,
  architectureLine,
  architectureRows,
  choiceName,
  headLabel,
  headsName,
  kvGroup,
  optionName,
} from '../../../src/common/architecture';
import {
  ACTIVATIONS,
  CONFIG_FIELDS,
  GATED_ACTIVATIONS,
  MODERN_PRESETS,
  NORM_TYPES,
  POSITIONALS,
  kvHeads,
  presetConfig,
} from '../../../src/engine/config';
import type { ModelConfig } from '../../../src/engine/config';

const gpt = presetConfig('decoder-only', 'tiny', 100);
const paper = presetConfig('encoder-decoder', 'tiny', 100);
/** Today's decoders, built as the engine's presets will build them (their arch on tiny's size). */
const modern = (name: string): ModelConfig => {
  const p = MODERN_PRESETS[name];
  if (!p) throw new Error(name);
  return { ...gpt, ...p.arch, nKvHeads: 0, ...p.size } as ModelConfig;
};
const llama = modern('llama-tiny');
const nanochat = modern('nanochat-tiny');

describe('architecture options', () => {
  it("are fields of the engine's config, with the engine's choices", () => {
    for (const k of ARCHITECTURE_OPTIONS) expect(CONFIG_FIELDS).toContain(k);
    expect(OPTION_INFO.positional.choices).toEqual(POSITIONALS);
    expect(OPTION_INFO.activation.choices).toEqual(ACTIVATIONS);
    expect(OPTION_INFO.normType.choices).toEqual(NORM_TYPES);
    expect([...GATED]).toEqual(GATED_ACTIVATIONS);
  });

  it('each says in one line what it does and which models use it', () => {
    for (const k of ARCHITECTURE_OPTIONS) {
      const d = OPTION_INFO[k].description;
      expect(d, k).not.toContain('\n');
      expect(d.length, k).toBeLessThanOrEqual(170);
      expect(d, k).toMatch(/\.$/);
      // A model or paper by name, in parentheses.
      expect(d, k).toMatch(/\((?:[^)]*)(Llama|GPT|Gemma|Pythia|nanochat|Mistral|Qwen|BLOOM|PaLM|RoFormer|paper)/);
    }
  });

  it("are described in the settings with the same words (attentionLab.model.overrides' properties)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8'));
    const props = pkg.contributes.configuration.properties['attentionLab.model.overrides'].properties;
    expect(Object.keys(props)).toEqual([...ARCHITECTURE_OPTIONS]);
    for (const k of ARCHITECTURE_OPTIONS) {
      expect(props[k].description, k).toBe(OPTION_INFO[k].description);
      expect(props[k].enum, k).toEqual(OPTION_INFO[k].choices);
    }
  });
});

describe('option names', () => {
  it('name the values of the paper, GPT-2, Llama and nanochat', () => {
    expect(optionName('positional', paper)).toBe('sinusoidal positions');
    expect(optionName('positional', gpt)).toBe('learned positions');
    expect(optionName('positional', llama)).toBe('RoPE θ 10000');
    expect(optionName('positional', { ...llama, ropeTheta: 500000, rotaryFraction: 0.25 })).toBe(
      'RoPE θ 500000 on 25 % of each head',
    );
    expect(
      optionName('positional', { ...llama, ropeTheta: 500000, ropeScaling: 'llama3', ropeScalingFactor: 32 }),
    ).toBe('RoPE θ 500000 (llama3 scaling ×32)');
    expect(optionName('positional', { ...gpt, positional: 'alibi' })).toBe('ALiBi');
    expect(optionName('normType', gpt)).toBe('LayerNorm');
    expect(optionName('normType', llama)).toBe('RMSNorm');
    expect(optionName('normScale', nanochat)).toBe('RMSNorm (no scale)');
    expect(optionName('activation', llama)).toBe('SwiGLU');
    expect(optionName('activation', nanochat)).toBe('ReLU²');
    expect(optionName('activation', { ...gpt, activation: 'geluTanh' })).toBe('GELU (tanh)');
    expect(optionName('nKvHeads', llama)).toBe('GQA 4 q / 2 kv heads');
    expect(optionName('nKvHeads', gpt)).toBe('MHA 4 heads');
    expect(optionName('nKvHeads', { ...gpt, nKvHeads: 1 })).toBe('MQA 4 q / 1 kv head');
    expect(optionName('nKvHeads', { ...gpt, nKvHeads: 4 })).toBe('MHA 4 heads');
    expect(optionName('headDim', { ...llama, headDim: 128 })).toBe('heads of 128');
    expect(optionName('headDim', gpt)).toBe(`heads of ${gpt.dModel / gpt.nHeads} (dModel / nHeads)`);
    expect(optionName('attnScale', { ...gpt, attnScale: 0.0625 })).toBe('scores × 0.0625');
    expect(optionName('attnScale', gpt)).toBe('scores × 1/√D');
    expect(architectureLine({ ...llama, headDim: 128, attnScale: 0.0625 })).toContain(
      'GQA 4 q / 2 kv heads · heads of 128 · scores × 0.0625',
    );
    expect(optionName('logitSoftCap', nanochat)).toBe('logit soft-cap 15');
    expect(optionName('attnSoftCap', nanochat)).toBe('no attention soft-cap');
    expect(optionName('slidingWindow', { ...gpt, slidingWindow: 32 })).toBe('sliding window 32');
    expect(optionName('slidingWindow', gpt)).toBe('the whole context');
    expect(optionName('qkNorm', nanochat)).toBe('QK-norm');
    expect(optionName('qkvBias', llama)).toBe('no q/k/v bias');
    expect(optionName('norm', paper)).toBe('post-norm');
    expect(choiceName('rope')).toBe('RoPE');
    expect(choiceName('relu2')).toBe('ReLU²');
  });

  it('say "?" for what a config leaves out, never a guess', () => {
    expect(optionName('positional', { kind: 'decoder-only' })).toBe('?');
    expect(headsName({ nHeads: 4 })).toBe('4 heads');
    expect(architectureRows({ kind: 'decoder-only' }).every((r) => r.value.includes('?'))).toBe(true);
  });

  it("name a config's architecture as rows and in one line", () => {
    const rows = Object.fromEntries(architectureRows(llama).map((r) => [r.label, r.value]));
    expect(rows).toMatchObject({
      positions: 'RoPE θ 10000',
      norm: 'pre-norm · RMSNorm',
      'feed-forward': 'SwiGLU (gated: 3 matrices)',
      'attention heads': 'GQA 4 q / 2 kv heads',
      biases: 'no biases',
      'soft-caps': 'none',
      'attention window': 'the whole context',
    });
    expect(Object.fromEntries(architectureRows(nanochat).map((r) => [r.label, r.value]))).toMatchObject({
      norm: 'pre-norm · RMSNorm (no scale)',
      'QK-norm': 'QK-norm',
      'soft-caps': 'logit soft-cap 15',
      'embedding norm': 'embedding norm',
    });
    expect(architectureLine(gpt)).toBe('learned positions · LayerNorm · GELU');
    expect(architectureLine(llama)).toBe('RoPE θ 10000 · RMSNorm · SwiGLU · GQA 4 q / 2 kv heads · no biases');
    expect(architectureLine({ ...gpt, qkvBias: true, attnOutBias: false, mlpBias: false })).toContain(
      'biases: q/k/v only',
    );
  });

  it("name Gemma 3's layers: sandwich norms, every n-th layer global, the local RoPE θ", () => {
    const gemma = { ...llama, postNorms: true, slidingWindow: 512, globalEvery: 6, ropeLocalTheta: 10000 };
    expect(optionName('postNorms', gemma)).toBe('sandwich norms');
    expect(optionName('postNorms', llama)).toBe('no sandwich norms');
    expect(optionName('globalEvery', gemma)).toBe('every 6th layer global');
    expect(optionName('globalEvery', { ...gemma, globalEvery: 2 })).toBe('every 2nd layer global');
    expect(optionName('globalEvery', { ...gemma, globalEvery: 0 })).toBe('no global layers');
    expect(optionName('ropeLocalTheta', gemma)).toBe('local RoPE θ 10000');
    const rows = Object.fromEntries(architectureRows(gemma).map((r) => [r.label, r.value]));
    expect(rows).toMatchObject({
      'attention window': 'sliding window 512, every 6th layer global (local RoPE θ 10000)',
      residual: 'sequential residual, sandwich norms',
    });
    expect(architectureLine(gemma)).toContain(
      'sliding window 512, every 6th layer global (local RoPE θ 10000) · sandwich norms',
    );
    // Without a window the global layers say nothing (every layer sees the whole context).
    expect(architectureLine({ ...llama, globalEvery: 6 })).not.toContain('global');
  });
});

describe('key/value groups of query heads', () => {
  it("follow the engine's rule: query head h reads kv head floor(h / (H / Hkv))", () => {
    for (const [H, kv] of [
      [8, 2],
      [8, 4],
      [6, 3],
      [4, 1],
      [4, 0],
      [4, 4],
    ] as const) {
      const groups = Array.from({ length: H }, (_, h) => kvGroup(h, H, kv));
      const n = kvHeads({ nHeads: H, nKvHeads: kv });
      expect(new Set(groups).size).toBe(n);
      // Consecutive query heads share a kv head, each group H / n long.
      for (let h = 0; h < H; h++) expect(groups[h]).toBe(Math.floor(h / (H / n)));
    }
    expect(kvGroup(5, 8, 2)).toBe(1);
    expect(kvGroup(3, 4, 0)).toBe(3);
  });

  it('name a head with its kv head under grouped- and multi-query attention only', () => {
    expect(headLabel(4, { nHeads: 8, nKvHeads: 4 })).toBe('head 5 · kv 3');
    expect(headLabel(4, { nHeads: 8, nKvHeads: 2 })).toBe('head 5 · kv 2');
    expect(headLabel(3, { nHeads: 4, nKvHeads: 1 })).toBe('head 4 · kv 1');
    expect(headLabel(3, { nHeads: 4, nKvHeads: 0 })).toBe('head 4');
    expect(headLabel(3, { nHeads: 4, nKvHeads: 4 })).toBe('head 4');
    expect(headLabel(3, { nHeads: 4 })).toBe('head 4');
    expect(headLabel(0, undefined)).toBe('head 1');
  });
});
