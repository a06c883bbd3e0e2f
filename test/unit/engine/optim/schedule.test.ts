import { describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { learningRate, peakLearningRate, validateSchedule } from '../../../../src/engine/optim/schedule';
import type { RateConfig, ScheduleConfig } from '../../../../src/engine/optim/schedule';

const noam = (warmup: number, dModel: number, factor = 1): RateConfig => ({
  lr: 123, // ignored by noam
  schedule: { type: 'noam', warmup, dModel, factor },
});

describe('noam schedule (Vaswani et al. §5.3)', () => {
  it('peaks at step = warmup with d^-0.5 · warmup^-0.5', () => {
    const cfg = noam(4000, 512);
    const peak = 1 / Math.sqrt(512 * 4000);
    expect(learningRate(cfg, 4000)).toBeCloseTo(peak, 15);
    expect(peakLearningRate(cfg)).toBeCloseTo(peak, 15);
    expect(learningRate(cfg, 3999)).toBeLessThan(learningRate(cfg, 4000));
    expect(learningRate(cfg, 4001)).toBeLessThan(learningRate(cfg, 4000));
  });

  it('rises linearly during warm-up and decays as step^-0.5 after it', () => {
    const cfg = noam(100, 64);
    const first = learningRate(cfg, 1);
    expect(first).toBeCloseTo(Math.pow(64, -0.5) * Math.pow(100, -1.5), 15);
    for (const k of [2, 10, 57, 100]) expect(learningRate(cfg, k)).toBeCloseTo(first * k, 14);
    // Four times further, half the rate.
    expect(learningRate(cfg, 400)).toBeCloseTo(learningRate(cfg, 100) / 2, 15);
    expect(learningRate(cfg, 900)).toBeCloseTo(learningRate(cfg, 100) / 3, 15);
  });

  it('ignores lr and scales with factor', () => {
    const a = learningRate({ ...noam(10, 16), lr: 1 }, 7);
    const b = learningRate({ ...noam(10, 16), lr: 99 }, 7);
    expect(a).toBe(b);
    expect(learningRate(noam(10, 16, 2.5), 7)).toBeCloseTo(2.5 * a, 15);
  });

  it('with warmup 0 is the pure inverse square root', () => {
    const cfg = noam(0, 16);
    expect(learningRate(cfg, 1)).toBeCloseTo(0.25, 15);
    expect(learningRate(cfg, 4)).toBeCloseTo(0.125, 15);
    expect(peakLearningRate(cfg)).toBeCloseTo(0.25, 15);
  });
});

describe('cosine schedule', () => {
  const cfg: RateConfig = { lr: 1e-3, schedule: { type: 'cosine', warmup: 10, maxSteps: 110, minLr: 1e-4 } };

  it('warms up linearly to lr at step = warmup', () => {
    expect(learningRate(cfg, 1)).toBeCloseTo(1e-4, 15);
    expect(learningRate(cfg, 5)).toBeCloseTo(5e-4, 15);
    expect(learningRate(cfg, 10)).toBeCloseTo(1e-3, 15);
  });

  it('ends at minLr at maxSteps and stays there', () => {
    expect(learningRate(cfg, 110)).toBe(1e-4);
    expect(learningRate(cfg, 111)).toBe(1e-4);
    expect(learningRate(cfg, 10_000)).toBe(1e-4);
    expect(learningRate(cfg, 109)).toBeGreaterThan(1e-4);
  });

  it('passes the midpoint halfway through the decay and decreases monotonically', () => {
    expect(learningRate(cfg, 60)).toBeCloseTo((1e-3 + 1e-4) / 2, 15);
    // 0.5·(1 + cos(π/4)) of the way above minLr at a quarter of the decay.
    expect(learningRate(cfg, 35)).toBeCloseTo(1e-4 + 0.5 * (1 + Math.SQRT1_2) * 9e-4, 15);
    for (let s = 11; s <= 110; s++) expect(learningRate(cfg, s)).toBeLessThan(learningRate(cfg, s - 1));
  });

  it('without warm-up starts just below lr', () => {
    const c: RateConfig = { lr: 2, schedule: { type: 'cosine', warmup: 0, maxSteps: 2, minLr: 0 } };
    expect(learningRate(c, 1)).toBeCloseTo(1, 15); // halfway through a 2-step decay
    expect(learningRate(c, 2)).toBe(0);
  });
});

describe('constant schedule', () => {
  it('warms up then holds lr', () => {
    const cfg: RateConfig = { lr: 0.5, schedule: { type: 'constant', warmup: 4 } };
    expect([1, 2, 3, 4, 5, 1000].map((s) => learningRate(cfg, s))).toEqual([0.125, 0.25, 0.375, 0.5, 0.5, 0.5]);
    expect(learningRate({ lr: 0.5, schedule: { type: 'constant', warmup: 0 } }, 1)).toBe(0.5);
  });
});

describe('learningRate step argument', () => {
  it('rejects step 0, negative and fractional steps', () => {
    for (const s of [0, -1, 1.5, Number.NaN]) {
      expect(() => learningRate(noam(10, 16), s)).toThrow(EngineError);
    }
  });
});

describe('validateSchedule', () => {
  const bad: [ScheduleConfig, RegExp][] = [
    [{ type: 'noam', warmup: -1, dModel: 16, factor: 1 }, /warmup/],
    [{ type: 'noam', warmup: 1.5, dModel: 16, factor: 1 }, /warmup/],
    [{ type: 'noam', warmup: 10, dModel: 0, factor: 1 }, /dModel/],
    [{ type: 'noam', warmup: 10, dModel: 16, factor: 0 }, /factor/],
    [{ type: 'noam', warmup: 10, dModel: 16, factor: Number.NaN }, /factor/],
    [{ type: 'cosine', warmup: 10, maxSteps: 10, minLr: 0 }, /maxSteps/],
    [{ type: 'cosine', warmup: 10, maxSteps: 100, minLr: 0.2 }, /minLr/],
    [{ type: 'cosine', warmup: 10, maxSteps: 100, minLr: -1 }, /minLr/],
    [{ type: 'linear', warmup: 10 } as unknown as ScheduleConfig, /schedule.type/],
  ];
  it.each(bad)('rejects %j', (schedule, field) => {
    let err: unknown;
    try {
      validateSchedule(schedule, 0.1);
    } catch (e) {
      err = e;
    }
    expect(EngineError.is(err, 'config/invalid')).toBe(true);
    expect((err as Error).message).toMatch(field);
  });

  it('accepts the valid shapes', () => {
    expect(() => validateSchedule({ type: 'noam', warmup: 0, dModel: 16, factor: 1 }, 1)).not.toThrow();
    expect(() => validateSchedule({ type: 'cosine', warmup: 0, maxSteps: 1, minLr: 0.1 }, 0.1)).not.toThrow();
    expect(() => validateSchedule({ type: 'constant', warmup: 0 }, 1)).not.toThrow();
  });
});
