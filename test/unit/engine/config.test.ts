import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/engine/config';
import {
  CONFIG_LIMITS,
  headSize,
  MAX_PARAMS,
  applyOverrides,
  paramsUpperBound,
  presetConfig,
  validateConfig,
  layerRopeScaled,
} from '../../../src/engine/config';
import { estimateModel } from '../../../src/engine/models/estimate';
import { EngineError } from '../../../src/engine/errors';

const good = presetConfig('encoder-decoder', 'tiny', 100, 90);

function invalid(over: Partial<ModelConfig>): EngineError {
  try {
    validateConfig({ ...good, ...over });
  } catch (e) {
    if (EngineError.is(e, 'config/invalid')) return e;
    throw e;
  }
  throw new Error('expected an EngineError');
}

describe('config', () => {
  it('builds the paper base and nanoGPT presets', () => {
    const base = presetConfig('encoder-decoder', 'base', 37000);
    expect([base.nEncoderLayers, base.nDecoderLayers, base.dModel, base.nHeads, base.dFF]).toEqual([
      6, 6, 512, 8, 2048,
    ]);
    expect([base.norm, base.positional, base.activation, base.labelSmoothing, base.dropout]).toEqual([
      'post',
      'sinusoidal',
      'relu',
      0.1,
      0.1,
    ]);
    const gpt = presetConfig('decoder-only', 'small', 65);
    expect([gpt.norm, gpt.positional, gpt.activation, gpt.tieEmbeddings, gpt.bias, gpt.layerNormEps]).toEqual([
      'pre',
      'learned',
      'gelu',
      true,
      true,
      1e-5,
    ]);
  });

  it('says how to fix d_model not divisible by heads', () => {
    expect(invalid({ dModel: 100, nHeads: 8 }).message).toMatch(/dModel 100 is not divisible by nHeads 8.*Use nHeads/);
  });

  it.each([
    [{ dModel: 0 }, /dModel must be greater than 0/],
    [{ nHeads: -1 }, /nHeads must be greater than 0/],
    [{ dFF: 2.5 }, /dFF must be an integer/],
    [{ maxLen: 0 }, /maxLen must be greater than 0/],
    [{ vocabSize: 3 }, /vocabSize 3 is too small.*at least 5/],
    [{ srcVocabSize: 2 }, /srcVocabSize 2 is too small/],
    [{ dropout: 1 }, /dropout must be in \[0, 1\)/],
    [{ norm: 'middle' as 'pre' }, /norm must be one of post, pre/],
    [{ nEncoderLayers: 0 }, /nEncoderLayers must be greater than 0/],
  ])('rejects %o', (over, re) => {
    expect(invalid(over).message).toMatch(re);
  });

  it('rejects an unknown preset and lists the real ones', () => {
    expect(() => presetConfig('decoder-only', 'huge', 50)).toThrow(/choose one of tiny, small, gpt/);
  });

  // Hostile sizes are refused in O(1), before the head suggestion loops over dModel or a
  // model is planned layer by layer: on the code before, dModel 1e15 with 7 heads looped
  // 1e15 times on the caller's thread (the extension host sizing the Configuration view).
  it('refuses an absurd dModel with heads that do not divide it without looping over it', () => {
    expect(invalid({ dModel: 1e15, nHeads: 7 }).message).toMatch(
      /dModel 1000000000000000 is larger than the 65536 .*set dModel to at most 65536/,
    );
    expect(() => applyOverrides(good, { dModel: '1e15', nHeads: 7 })).toThrow(/dModel .* is larger than/);
  });

  it.each([
    [{ nDecoderLayers: 1e6 }, /nDecoderLayers 1000000 is larger than the 1024/],
    [{ nEncoderLayers: 1e9 }, /nEncoderLayers 1000000000 is larger than the 1024/],
    [{ vocabSize: 2 ** 40 }, /vocabSize .* is larger than/],
    [{ maxLen: 2 ** 30 }, /maxLen .* is larger than/],
    [{ dFF: 1e12 }, /dFF .* is larger than/],
    [{ nHeads: 96, dModel: 64 }, /nHeads 96 is more than dModel 64/],
    [
      { dModel: 65536, dFF: 262144, nHeads: 64, nDecoderLayers: 64 },
      /billion parameters, more than the 2\.15 billion.*use fewer layers/,
    ],
  ])('refuses the out-of-bounds sizes %o', (over, re) => {
    expect(invalid(over).message).toMatch(re);
  });

  it('keeps the head suggestion nearest the asked heads (divisor pairs up to the square root)', () => {
    expect(invalid({ dModel: 96, nHeads: 7 }).message).toMatch(/Use nHeads 6 /);
    expect(invalid({ dModel: 98, nHeads: 13 }).message).toMatch(/Use nHeads 14 /);
    expect(invalid({ dModel: 7998, nHeads: 100, dFF: 8 }).message).toMatch(/Use nHeads 93 /);
  });

  it('bounds the exact parameter count from above, and admits GPT-2 XL', () => {
    for (const c of [
      good,
      presetConfig('decoder-only', 'gpt', 50257),
      presetConfig('encoder-decoder', 'base', 37000),
    ]) {
      expect(paramsUpperBound(c)).toBeGreaterThanOrEqual(estimateModel(c, { maxBatch: 1, maxLen: 1 }).params);
    }
    const xl = validateConfig({
      ...presetConfig('decoder-only', 'gpt', 50257),
      dModel: 1600,
      nHeads: 25,
      dFF: 6400,
      nDecoderLayers: 48,
    });
    expect(paramsUpperBound(xl)).toBeLessThan(MAX_PARAMS);
    expect(CONFIG_LIMITS.nDecoderLayers).toBe(1024);
  });
});

describe("config: the fields of today's small models (issue 30)", () => {
  const gpt = presetConfig('decoder-only', 'tiny', 65);
  const refuse = (over: Partial<ModelConfig>): string => {
    try {
      validateConfig({ ...gpt, ...over });
    } catch (e) {
      if (EngineError.is(e, 'config/invalid')) return e.message;
      throw e;
    }
    return 'accepted';
  };

  it('fills the new fields of an older config with values that keep the model what it was', () => {
    const old: Record<string, unknown> = { ...gpt };
    for (const k of ['headDim', 'attnScale', 'postNorms', 'globalEvery', 'ropeLocalTheta']) delete old[k];
    const c = validateConfig(old as unknown as ModelConfig);
    expect([c.headDim, c.attnScale, c.postNorms, c.globalEvery, c.ropeLocalTheta]).toEqual([0, 0, false, 0, 0]);
    expect(headSize(c)).toBe(c.dModel / c.nHeads);
  });

  it('lets headDim stand apart from dModel / nHeads, and sizes RoPE by it', () => {
    expect(refuse({ dModel: 100, nHeads: 8, headDim: 16 })).toBe('accepted');
    expect(headSize({ dModel: 640, nHeads: 4, headDim: 256 })).toBe(256);
    expect(refuse({ headDim: -1 })).toMatch(/headDim must be ≥ 0/);
    expect(refuse({ positional: 'rope', headDim: 6, rotaryFraction: 0.5 })).toMatch(/rotates 3 of each head's 6/);
  });

  it('refuses the Gemma options where they cannot act, saying what to set', () => {
    expect(refuse({ norm: 'post', postNorms: true })).toMatch(/postNorms .* needs norm pre/);
    expect(refuse({ globalEvery: 6 })).toMatch(/needs a slidingWindow/);
    expect(refuse({ attnScale: -0.1 })).toMatch(/attnScale must be ≥ 0/);
    expect(refuse({ ropeLocalTheta: -1 })).toMatch(/ropeLocalTheta must be ≥ 0/);
  });

  it('takes RoPE scaling (linear, llama3) on a RoPE model only, with factors that make sense', () => {
    const rope = { positional: 'rope' } as const;
    expect(validateConfig(gpt).ropeScaling).toBe('none');
    expect(refuse({ ...rope, ropeScaling: 'llama3', ropeScalingFactor: 32 })).toBe('accepted');
    expect(refuse({ ropeScaling: 'linear', ropeScalingFactor: 8 })).toMatch(/set positional rope or ropeScaling none/);
    expect(refuse({ ...rope, ropeScaling: 'linear', ropeScalingFactor: 0.5 })).toMatch(/ropeScalingFactor must be ≥ 1/);
    expect(refuse({ ...rope, ropeScaling: 'llama3', ropeLowFreqFactor: 4, ropeHighFreqFactor: 4 })).toMatch(
      /0 < ropeLowFreqFactor < ropeHighFreqFactor/,
    );
    expect(refuse({ ...rope, ropeScaling: 'llama3', ropeOriginalMaxLen: 0 })).toMatch(/ropeOriginalMaxLen ≥ 1/);
    expect(refuse({ ...rope, ropeScaling: 'yarn' as never })).toMatch(/ropeScaling/);
    // Gemma 3: the global layers are scaled, the local ones not; without globalEvery every layer is.
    const gemma = { slidingWindow: 4, globalEvery: 2 };
    expect([0, 1, 2, 3].map((i) => layerRopeScaled(gemma, i))).toEqual([false, true, false, true]);
    expect([0, 1].map((i) => layerRopeScaled({ slidingWindow: 4, globalEvery: 0 }, i))).toEqual([true, true]);
  });
});
