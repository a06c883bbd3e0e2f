import { describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import {
  nanoGptOptimizer,
  paperOptimizer,
  validateOptimizerConfig,
} from '../../../../src/engine/optim/optimizerConfig';
import type { OptimizerConfig } from '../../../../src/engine/optim/optimizerConfig';
import { learningRate } from '../../../../src/engine/optim/schedule';

describe('paperOptimizer', () => {
  it('is Adam (0.9, 0.98, 1e-9) with the noam schedule, warm-up 4000, no decay or clipping', () => {
    const c = paperOptimizer(512);
    expect(c.type).toBe('adam');
    expect([c.beta1, c.beta2, c.eps, c.weightDecay, c.clipGradNorm]).toEqual([0.9, 0.98, 1e-9, 0, 0]);
    expect(c.schedule).toEqual({ type: 'noam', warmup: 4000, dModel: 512, factor: 1 });
  });

  it('stores the schedule peak in lr', () => {
    const c = paperOptimizer(512);
    expect(c.lr).toBeCloseTo(1 / Math.sqrt(512 * 4000), 15);
    expect(learningRate(c, 4000)).toBeCloseTo(c.lr, 15);
  });

  it('rejects a bad d_model', () => {
    expect(() => paperOptimizer(0)).toThrow(/dModel/);
  });
});

describe('nanoGptOptimizer', () => {
  it('is AdamW lr 1e-3, wd 0.1, clip 1, cosine to lr/10 at maxSteps', () => {
    const c = nanoGptOptimizer(5000);
    expect(c.type).toBe('adamw');
    expect([c.lr, c.beta1, c.beta2, c.weightDecay, c.clipGradNorm]).toEqual([1e-3, 0.9, 0.99, 0.1, 1]);
    expect(c.schedule).toEqual({ type: 'cosine', warmup: 100, maxSteps: 5000, minLr: 1e-4 });
    expect(learningRate(c, 100)).toBeCloseTo(1e-3, 15);
    expect(learningRate(c, 5000)).toBeCloseTo(1e-4, 15);
  });

  it('shortens the warm-up for short runs and stays valid for a one-step run', () => {
    expect(nanoGptOptimizer(20).schedule).toMatchObject({ warmup: 2, maxSteps: 20 });
    expect(nanoGptOptimizer(1).schedule).toMatchObject({ warmup: 0, maxSteps: 1 });
  });

  it('rejects a non-positive or fractional maxSteps', () => {
    for (const n of [0, -5, 2.5]) expect(() => nanoGptOptimizer(n)).toThrow(EngineError);
  });
});

describe('validateOptimizerConfig', () => {
  const base = nanoGptOptimizer(1000);
  const cases: [string, Partial<Record<keyof OptimizerConfig, unknown>>, RegExp][] = [
    ['unknown type', { type: 'sgd' }, /type/],
    ['zero lr', { lr: 0 }, /lr/],
    ['NaN lr', { lr: Number.NaN }, /lr/],
    ['beta1 = 1', { beta1: 1 }, /beta1/],
    ['negative beta2', { beta2: -0.1 }, /beta2/],
    ['zero eps', { eps: 0 }, /eps/],
    ['negative weight decay', { weightDecay: -0.1 }, /weightDecay/],
    ['decay with plain adam', { type: 'adam' }, /adamw/],
    ['decay that flips signs', { weightDecay: 2000 }, /weightDecay/],
    ['negative clip', { clipGradNorm: -1 }, /clipGradNorm/],
    ['string clip', { clipGradNorm: '1' }, /clipGradNorm/],
    ['missing schedule', { schedule: undefined }, /schedule/],
    ['minLr above lr', { lr: 1e-5 }, /minLr/],
  ];
  it.each(cases)('rejects %s', (_name, patch, field) => {
    const cfg = { ...base, ...patch } as unknown as OptimizerConfig;
    let err: unknown;
    try {
      validateOptimizerConfig(cfg);
    } catch (e) {
      err = e;
    }
    expect(EngineError.is(err, 'config/invalid')).toBe(true);
    expect((err as Error).message).toMatch(field);
  });

  it('accepts the presets and returns the config itself', () => {
    expect(validateOptimizerConfig(base)).toBe(base);
    const p = paperOptimizer(64);
    expect(validateOptimizerConfig(p)).toBe(p);
  });
});
