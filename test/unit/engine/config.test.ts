import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/engine/config';
import { presetConfig, validateConfig } from '../../../src/engine/config';
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
    expect([base.nEncoderLayers, base.nDecoderLayers, base.dModel, base.nHeads, base.dFF]).toEqual([6, 6, 512, 8, 2048]);
    expect([base.norm, base.positional, base.activation, base.labelSmoothing, base.dropout]).toEqual(['post', 'sinusoidal', 'relu', 0.1, 0.1]);
    const gpt = presetConfig('decoder-only', 'small', 65);
    expect([gpt.norm, gpt.positional, gpt.activation, gpt.tieEmbeddings, gpt.bias, gpt.layerNormEps]).toEqual(['pre', 'learned', 'gelu', true, true, 1e-5]);
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
});
