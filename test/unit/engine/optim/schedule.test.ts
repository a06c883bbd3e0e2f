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

describe('restart schedule (SGDR warm restart)', () => {
  const lr = 1e-3;
  const minLr = 1e-4;
  // A run planned for 100 steps, extended to 200: warm up again over 10 steps, then decay.
  const first: RateConfig = { lr, schedule: { type: 'cosine', warmup: 10, maxSteps: 100, minLr } };
  const restart: RateConfig = { lr, schedule: { type: 'restart', start: 100, warmup: 10, maxSteps: 200, minLr } };

  it('starts from minLr, where the cosine before it ended, and warms up linearly to lr', () => {
    expect(learningRate(first, 100)).toBe(minLr);
    expect(learningRate(restart, 100)).toBe(minLr);
    expect(learningRate(restart, 101)).toBeCloseTo(minLr + (lr - minLr) / 10, 15);
    expect(learningRate(restart, 105)).toBeCloseTo((lr + minLr) / 2, 15);
    expect(learningRate(restart, 110)).toBe(lr);
  });

  it('decays as a cosine to exactly minLr at maxSteps and stays there', () => {
    expect(learningRate(restart, 155)).toBeCloseTo((lr + minLr) / 2, 15);
    for (let s = 111; s <= 200; s++) expect(learningRate(restart, s)).toBeLessThan(learningRate(restart, s - 1));
    expect(learningRate(restart, 200)).toBe(minLr);
    expect(learningRate(restart, 5000)).toBe(minLr);
  });

  it('has the cosine shape of a fresh run of the same length, shifted by start', () => {
    const fresh: RateConfig = { lr, schedule: { type: 'cosine', warmup: 10, maxSteps: 100, minLr } };
    for (let k = 11; k <= 100; k++) expect(learningRate(restart, 100 + k)).toBe(learningRate(fresh, k));
  });

  it('without warm-up starts the decay at once', () => {
    const c: RateConfig = { lr: 2, schedule: { type: 'restart', start: 4, warmup: 0, maxSteps: 6, minLr: 0 } };
    expect(learningRate(c, 5)).toBeCloseTo(1, 15);
    expect(learningRate(c, 6)).toBe(0);
  });
});

describe('wsd schedule (warmup–stable–decay)', () => {
  const wsd = (
    patch: Partial<{ start: number; warmup: number; minLr: number; decayFraction: number }> = {},
  ): RateConfig => ({
    lr: 1,
    schedule: { type: 'wsd', start: 0, warmup: 10, maxSteps: 100, minLr: 0.1, decayFraction: 0.2, ...patch },
  });

  it('warms up linearly from 0 to lr over warmup steps', () => {
    expect(learningRate(wsd(), 1)).toBeCloseTo(0.1, 15);
    expect(learningRate(wsd(), 5)).toBeCloseTo(0.5, 15);
    expect(learningRate(wsd(), 10)).toBe(1);
  });

  it('holds the peak on the plateau until the last decayFraction of maxSteps', () => {
    for (const step of [11, 50, 79, 80]) expect(learningRate(wsd(), step)).toBe(1);
    expect(peakLearningRate(wsd())).toBe(1);
  });

  it('decays linearly to minLr over the last 20% and stays there', () => {
    // Decay from step 80 (rate 1) to step 100 (minLr 0.1): 0.045 less per step.
    expect(learningRate(wsd(), 81)).toBeCloseTo(1 - 0.9 / 20, 14);
    expect(learningRate(wsd(), 90)).toBeCloseTo(0.55, 14);
    expect(learningRate(wsd(), 99)).toBeCloseTo(0.1 + 0.9 / 20, 14);
    expect(learningRate(wsd(), 100)).toBe(0.1);
    expect(learningRate(wsd(), 150)).toBe(0.1);
    expect(learningRate(wsd({ decayFraction: 0.5 }), 75)).toBeCloseTo(0.55, 14);
  });

  it('continuing a run (start > 0) warms up from minLr and decays over the last 20% of its own steps', () => {
    const cfg: RateConfig = {
      lr: 1,
      schedule: { type: 'wsd', start: 100, warmup: 10, maxSteps: 200, minLr: 0.1, decayFraction: 0.2 },
    };
    expect(learningRate(cfg, 100)).toBe(0.1);
    expect(learningRate(cfg, 105)).toBeCloseTo(0.55, 14);
    expect(learningRate(cfg, 180)).toBe(1);
    expect(learningRate(cfg, 190)).toBeCloseTo(0.55, 14);
    expect(learningRate(cfg, 200)).toBe(0.1);
  });

  it('refuses a decayFraction outside (0, 1] and a warm-up that runs into the decay', () => {
    expect(() => validateSchedule(wsd({ decayFraction: 0 }).schedule, 1)).toThrow(
      /decayFraction must be a number in \(0, 1\]/,
    );
    expect(() => validateSchedule(wsd({ decayFraction: 1.5 }).schedule, 1)).toThrow(/decayFraction/);
    expect(() => validateSchedule(wsd({ warmup: 90 }).schedule, 1)).toThrow(
      /warm-up ends at step 90 but the decay starts at step 80/,
    );
    expect(validateSchedule(wsd().schedule, 1)).toEqual(wsd().schedule);
  });
});

describe('segments schedule', () => {
  const lr = 1e-3;
  const minLr = 1e-4;
  const cosine = { type: 'cosine', warmup: 10, maxSteps: 100, minLr } as const;
  const segmented: RateConfig = {
    lr,
    schedule: {
      type: 'segments',
      segments: [
        { fromStep: 0, toStep: 100, schedule: cosine },
        { fromStep: 100, toStep: 150, schedule: { type: 'restart', start: 100, warmup: 5, maxSteps: 150, minLr } },
        { fromStep: 150, toStep: 160, schedule: { type: 'restart', start: 150, warmup: 1, maxSteps: 160, minLr } },
      ],
    },
  };

  it('follows each segment in its own steps: the first exactly as the plan it was', () => {
    for (let s = 1; s <= 100; s++) expect(learningRate(segmented, s)).toBe(learningRate({ lr, schedule: cosine }, s));
    expect(learningRate(segmented, 101)).toBeCloseTo(minLr + (lr - minLr) / 5, 15);
    expect(learningRate(segmented, 105)).toBe(lr);
    expect(learningRate(segmented, 150)).toBe(minLr);
    expect(learningRate(segmented, 151)).toBe(lr);
    expect(learningRate(segmented, 160)).toBe(minLr);
    expect(learningRate(segmented, 161)).toBe(minLr); // past the last segment: the last one, flat
    expect(peakLearningRate(segmented)).toBe(lr);
  });

  it('continues noam and constant schedules unchanged across segments', () => {
    const noamS = { type: 'noam', warmup: 10, dModel: 16, factor: 1 } as const;
    const seg: RateConfig = {
      lr,
      schedule: {
        type: 'segments',
        segments: [
          { fromStep: 0, toStep: 20, schedule: noamS },
          { fromStep: 20, toStep: 40, schedule: noamS },
        ],
      },
    };
    for (let s = 1; s <= 45; s++) expect(learningRate(seg, s)).toBe(learningRate({ lr, schedule: noamS }, s));
    const c: RateConfig = {
      lr,
      schedule: {
        type: 'segments',
        segments: [
          { fromStep: 0, toStep: 3, schedule: { type: 'constant', warmup: 2 } },
          { fromStep: 3, toStep: 9, schedule: { type: 'constant', warmup: 2 } },
        ],
      },
    };
    expect([1, 2, 3, 4, 9].map((s) => learningRate(c, s))).toEqual([lr / 2, lr, lr, lr, lr]);
  });

  it.each<[string, unknown, RegExp]>([
    ['empty', [], /non-empty/],
    [
      'not starting at 0',
      [{ fromStep: 1, toStep: 5, schedule: { type: 'constant', warmup: 0 } }],
      /segments\[0\]\.fromStep must be 0/,
    ],
    [
      'with a gap',
      [
        { fromStep: 0, toStep: 5, schedule: { type: 'constant', warmup: 0 } },
        { fromStep: 6, toStep: 9, schedule: { type: 'constant', warmup: 0 } },
      ],
      /segments\[1\]\.fromStep must be 5/,
    ],
    [
      'empty segment',
      [{ fromStep: 0, toStep: 0, schedule: { type: 'constant', warmup: 0 } }],
      /toStep must be an integer greater than fromStep/,
    ],
    ['nested', [{ fromStep: 0, toStep: 5, schedule: { type: 'segments', segments: [] } }], /cannot itself be segments/],
    [
      'a bad restart',
      [{ fromStep: 0, toStep: 5, schedule: { type: 'restart', start: 0, warmup: 5, maxSteps: 5, minLr: 0 } }],
      /segments\[0\]\.schedule\.maxSteps/,
    ],
  ])('rejects segments that are %s', (_name, segments, pattern) => {
    expect(() => validateSchedule({ type: 'segments', segments } as unknown as ScheduleConfig, lr)).toThrow(pattern);
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
    [{ type: 'restart', start: -1, warmup: 0, maxSteps: 10, minLr: 0 }, /start/],
    [
      { type: 'restart', start: 10, warmup: 5, maxSteps: 15, minLr: 0 },
      /maxSteps must be an integer greater than start \+ warmup \(15\)/,
    ],
    [{ type: 'restart', start: 10, warmup: 5, maxSteps: 20, minLr: 1 }, /minLr/],
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
