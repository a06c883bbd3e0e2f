/**
 * Learning-rate schedules: the learning rate as a function of the 1-based step.
 *
 * - `noam`: the paper's warm-up then inverse-square-root decay (Vaswani et al. 2017, §5.3):
 *   lrate = factor · d_model^−0.5 · min(step^−0.5, step · warmup^−1.5). The peak, at
 *   step = warmup, is factor · d_model^−0.5 · warmup^−0.5. This schedule sets the rate by
 *   itself: the optimizer's `lr` field is NOT used (`paperOptimizer` sets it to the peak only
 *   so that a printed config shows the largest rate the run will use).
 * - `cosine`: linear warm-up to `lr`, then half a cosine down to `minLr` at `maxSteps`, then
 *   flat at `minLr` (Loshchilov & Hutter, SGDR 2017; nanoGPT's `get_lr`, shifted to 1-based
 *   steps so that step = warmup is the peak and step = maxSteps is exactly `minLr`).
 * - `constant`: linear warm-up to `lr`, then `lr`.
 *
 * Every warm-up is linear: lr · step / warmup for step ≤ warmup (warmup 0 = none).
 * Leaves out: step-decay and plateau schedules, and validation of the optimizer fields
 * other than the schedule's own (`optimizer.ts` does that).
 */

import { EngineError } from '../errors';

/** How the learning rate changes over training. */
export type ScheduleConfig =
  | { readonly type: 'noam'; readonly warmup: number; readonly dModel: number; readonly factor: number }
  | { readonly type: 'cosine'; readonly warmup: number; readonly maxSteps: number; readonly minLr: number }
  | { readonly type: 'constant'; readonly warmup: number };

/** The two fields a schedule reads: the base rate and the schedule itself. */
export interface RateConfig {
  /** Base (peak) learning rate; ignored by `noam`, which computes its own. */
  readonly lr: number;
  readonly schedule: ScheduleConfig;
}

/**
 * The learning rate at a 1-based step. Step 0 or a fractional step is a caller bug and
 * throws EngineError('input/invalid').
 */
export function learningRate(cfg: RateConfig, step: number): number {
  if (!Number.isInteger(step) || step < 1) {
    throw new EngineError(
      'input/invalid',
      `learningRate needs a 1-based integer step, got ${String(step)}; the first optimizer step is step 1.`,
    );
  }
  const s = cfg.schedule;
  switch (s.type) {
    case 'noam':
      // Vaswani et al. §5.3. With warmup 0, warmup^−1.5 = ∞ and min() picks step^−0.5.
      return s.factor * Math.pow(s.dModel, -0.5) * Math.min(Math.pow(step, -0.5), step * Math.pow(s.warmup, -1.5));
    case 'cosine': {
      if (step <= s.warmup) return (cfg.lr * step) / s.warmup;
      if (step >= s.maxSteps) return s.minLr;
      const ratio = (step - s.warmup) / (s.maxSteps - s.warmup); // in (0, 1)
      const coeff = 0.5 * (1 + Math.cos(Math.PI * ratio)); // 1 → 0
      return s.minLr + coeff * (cfg.lr - s.minLr);
    }
    case 'constant':
      return step <= s.warmup ? (cfg.lr * step) / s.warmup : cfg.lr;
    default:
      return s satisfies never;
  }
}

/**
 * The largest rate the schedule reaches: `lr` for cosine and constant, and for noam its
 * value at step = warmup (step 1 when there is no warm-up).
 */
export function peakLearningRate(cfg: RateConfig): number {
  const s = cfg.schedule;
  return s.type === 'noam' ? learningRate(cfg, Math.max(1, s.warmup)) : cfg.lr;
}

/**
 * Checks a schedule against the base rate it will use; throws EngineError('config/invalid')
 * naming the field, the value and the fix. Returns the schedule.
 */
export function validateSchedule(schedule: ScheduleConfig, lr: number): ScheduleConfig {
  const bad = (msg: string): never => {
    throw new EngineError('config/invalid', msg);
  };
  const s = schedule as unknown as Record<string, unknown>;
  if (typeof s !== 'object' || s === null) return bad(`schedule must be an object, got ${String(s)}.`);
  const type = s['type'];
  if (type !== 'noam' && type !== 'cosine' && type !== 'constant') {
    return bad(`schedule.type must be one of noam, cosine, constant; got ${String(type)}.`);
  }
  const warmup = s['warmup'];
  if (typeof warmup !== 'number' || !Number.isInteger(warmup) || warmup < 0) {
    bad(`schedule.warmup must be a whole number of steps ≥ 0, got ${String(warmup)}; use 0 for no warm-up.`);
  }
  if (type === 'noam') {
    const d = s['dModel'];
    if (typeof d !== 'number' || !Number.isInteger(d) || d <= 0) {
      bad(`schedule.dModel must be the model's d_model (a positive integer), got ${String(d)}.`);
    }
    const f = s['factor'];
    if (typeof f !== 'number' || !Number.isFinite(f) || f <= 0) {
      bad(`schedule.factor must be a positive number, got ${String(f)}; the paper uses 1.`);
    }
  } else if (type === 'cosine') {
    const maxSteps = s['maxSteps'];
    if (typeof maxSteps !== 'number' || !Number.isInteger(maxSteps) || maxSteps <= (warmup as number)) {
      bad(`schedule.maxSteps must be an integer greater than warmup (${String(warmup)}), got ${String(maxSteps)}; set it to the number of training steps.`);
    }
    const minLr = s['minLr'];
    if (typeof minLr !== 'number' || !Number.isFinite(minLr) || minLr < 0 || minLr > lr) {
      bad(`schedule.minLr must be between 0 and lr (${lr}), got ${String(minLr)}; nanoGPT uses lr / 10.`);
    }
  }
  return schedule;
}
