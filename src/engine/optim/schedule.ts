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
 * - `restart`: a warm restart at step `start` (SGDR, Loshchilov & Hutter 2017): linear from
 *   `minLr` back up to `lr` over `warmup` steps, then half a cosine down to `minLr` at
 *   `maxSteps`. It starts from the rate a cosine ends at, so the rate is continuous at the
 *   restart; this is how a cosine run extended with more steps continues.
 * - `wsd`: warmup–stable–decay (Hu et al. 2024, MiniCPM; nanochat's "warmdown"): linear warm-up
 *   to `lr` over `warmup` steps, `lr` held until the decay starts, then a straight line down to
 *   `minLr` over the last `decayFraction` of the segment's steps (maxSteps − start), reaching
 *   `minLr` at `maxSteps`, then flat. Its decay span is decayFraction · (maxSteps − start), not
 *   rounded, so the decay starts between steps when that is not whole. With `start` > 0 (a run
 *   extended with more steps) the steps count from `start` and the warm-up climbs from `minLr`,
 *   where the segment before ended, as `restart` does.
 * - `segments`: a run trained in segments (a finished run extended with more steps): steps
 *   fromStep+1 … toStep of each segment follow that segment's schedule, written in the run's
 *   global steps, so the rate is a function of the step alone and resuming anywhere inside a
 *   segment is exact. Steps past the last segment follow the last one.
 *
 * Every warm-up from zero is linear: lr · step / warmup for step ≤ warmup (warmup 0 = none).
 * Leaves out: step-decay and plateau schedules, choosing a segment's schedule (the lab does:
 * `src/lab/runs/segments.ts`), and validation of the optimizer fields other than the schedule's
 * own (`optimizer.ts` does that).
 */

import { EngineError } from '../errors';

/** How the learning rate changes over one stretch of training (the whole run, or one segment). */
export type SegmentSchedule =
  | { readonly type: 'noam'; readonly warmup: number; readonly dModel: number; readonly factor: number }
  | { readonly type: 'cosine'; readonly warmup: number; readonly maxSteps: number; readonly minLr: number }
  | { readonly type: 'constant'; readonly warmup: number }
  | {
      readonly type: 'restart';
      readonly start: number;
      readonly warmup: number;
      readonly maxSteps: number;
      readonly minLr: number;
    }
  | {
      readonly type: 'wsd';
      readonly start: number;
      readonly warmup: number;
      readonly maxSteps: number;
      readonly minLr: number;
      /** Share of the segment's steps the decay takes, in (0, 1]; 0.2 by default (WSD_DECAY_FRACTION). */
      readonly decayFraction: number;
    };

/** The share of a `wsd` segment's steps its linear decay takes by default (nanochat's warmdown 0.2). */
export const WSD_DECAY_FRACTION = 0.2;

/** Steps fromStep+1 … toStep of a run, and the schedule they follow. */
export interface ScheduleSegment {
  readonly fromStep: number;
  readonly toStep: number;
  readonly schedule: SegmentSchedule;
}

/** How the learning rate changes over training: one schedule, or one per segment. */
export type ScheduleConfig =
  SegmentSchedule | { readonly type: 'segments'; readonly segments: readonly ScheduleSegment[] };

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
  if (s.type !== 'segments') return segmentRate(cfg.lr, s, step);
  const last = s.segments[s.segments.length - 1] as ScheduleSegment;
  for (const seg of s.segments) if (step <= seg.toStep) return segmentRate(cfg.lr, seg.schedule, step);
  return segmentRate(cfg.lr, last.schedule, step);
}

/** The rate of one schedule at a 1-based step (checked by the caller). */
function segmentRate(lr: number, s: SegmentSchedule, step: number): number {
  switch (s.type) {
    case 'noam':
      // Vaswani et al. §5.3. With warmup 0, warmup^−1.5 = ∞ and min() picks step^−0.5.
      return s.factor * Math.pow(s.dModel, -0.5) * Math.min(Math.pow(step, -0.5), step * Math.pow(s.warmup, -1.5));
    case 'cosine':
      if (step <= s.warmup) return (lr * step) / s.warmup;
      return cosineDecay(lr, s.minLr, step - s.warmup, s.maxSteps - s.warmup);
    case 'constant':
      return step <= s.warmup ? (lr * step) / s.warmup : lr;
    case 'restart': {
      const k = step - s.start; // steps since the restart
      if (k <= 0) return s.minLr;
      if (k <= s.warmup) return s.minLr + ((lr - s.minLr) * k) / s.warmup;
      return cosineDecay(lr, s.minLr, k - s.warmup, s.maxSteps - s.start - s.warmup);
    }
    case 'wsd': {
      const k = step - s.start; // steps since the segment began
      const from = s.start > 0 ? s.minLr : 0; // a continued run warms up from where it ended
      if (k <= 0) return s.minLr;
      if (k <= s.warmup) return from + ((lr - from) * k) / s.warmup;
      const left = s.maxSteps - step; // steps to the end of the decay
      const span = s.decayFraction * (s.maxSteps - s.start);
      if (left <= 0) return s.minLr;
      if (left >= span) return lr;
      return s.minLr + ((lr - s.minLr) * left) / span;
    }
    default:
      return s satisfies never;
  }
}

/** Half a cosine from `lr` down to `minLr` over `span` steps, `k` steps in; `minLr` from k = span on. */
function cosineDecay(lr: number, minLr: number, k: number, span: number): number {
  if (k >= span) return minLr;
  const ratio = k / span; // in (0, 1)
  const coeff = 0.5 * (1 + Math.cos(Math.PI * ratio)); // 1 → 0
  return minLr + coeff * (lr - minLr);
}

/**
 * The largest rate the schedule reaches: `lr` for cosine, constant, restart and wsd, for noam its
 * value at step = warmup (step 1 when there is no warm-up), and for segments the largest of
 * theirs.
 */
export function peakLearningRate(cfg: RateConfig): number {
  const s = cfg.schedule;
  if (s.type === 'segments')
    return Math.max(...s.segments.map((seg) => peakLearningRate({ lr: cfg.lr, schedule: seg.schedule })));
  return s.type === 'noam' ? learningRate(cfg, Math.max(1, s.warmup)) : cfg.lr;
}

/**
 * Checks a schedule against the base rate it will use; throws EngineError('config/invalid')
 * naming the field, the value and the fix. Returns the schedule.
 */
export function validateSchedule(schedule: ScheduleConfig, lr: number): ScheduleConfig {
  const s = schedule as unknown as Record<string, unknown>;
  if (typeof s !== 'object' || s === null) return bad(`schedule must be an object, got ${String(s)}.`);
  if (s['type'] !== 'segments') return validateSegmentSchedule(s, lr, 'schedule');
  const segments = s['segments'];
  if (!Array.isArray(segments) || segments.length === 0)
    return bad(`schedule.segments must be a non-empty list of segments, got ${String(segments)}.`);
  let from = 0;
  segments.forEach((seg: unknown, i) => {
    const where = `schedule.segments[${i}]`;
    if (typeof seg !== 'object' || seg === null) return bad(`${where} must be an object, got ${String(seg)}.`);
    const g = seg as Record<string, unknown>;
    if (g['fromStep'] !== from)
      bad(
        `${where}.fromStep must be ${from} ` +
          (`(` +
            `${i === 0 ? 'the first segment starts at step 0' : 'where the segment before it ends'}` +
            `), got ${String(g['fromStep'])}.`),
      );
    const to = g['toStep'];
    if (typeof to !== 'number' || !Number.isInteger(to) || to <= from)
      bad(`${where}.toStep must be an integer greater than fromStep (${from}), got ${String(to)}.`);
    const inner = g['schedule'] as Record<string, unknown> | null;
    if (typeof inner === 'object' && inner !== null && inner['type'] === 'segments')
      bad(`${where}.schedule cannot itself be segments; give each segment one schedule.`);
    validateSegmentSchedule(inner, lr, `${where}.schedule`);
    from = to as number;
  });
  return schedule;
}

/** A `wsd` segment's decayFraction is in (0, 1] and its decay starts after the warm-up ends. */
function validateDecay(
  s: Record<string, unknown>,
  where: string,
  maxSteps: number,
  least: number,
  start: number,
): void {
  const f = s['decayFraction'];
  if (typeof f !== 'number' || !Number.isFinite(f) || f <= 0 || f > 1)
    bad(`${where}.decayFraction must be a number in (0, 1], got ${String(f)}; nanochat decays over the last 0.2.`);
  const decayStart = maxSteps - (f as number) * (maxSteps - start);
  if (decayStart < least)
    bad(
      `${where}: the warm-up ends at step ${least} but the decay starts at step ${decayStart}; shorten the ` +
        `warm-up or the decayFraction (${String(f)}), or train more steps.`,
    );
}

function bad(msg: string): never {
  throw new EngineError('config/invalid', msg);
}

function validateSegmentSchedule(s: Record<string, unknown> | null, lr: number, where: string): ScheduleConfig {
  if (typeof s !== 'object' || s === null) return bad(`${where} must be an object, got ${String(s)}.`);
  const type = s['type'];
  if (type !== 'noam' && type !== 'cosine' && type !== 'constant' && type !== 'restart' && type !== 'wsd') {
    return bad(`${where}.type must be one of noam, cosine, constant, restart, wsd, segments; got ${String(type)}.`);
  }
  const warmup = s['warmup'];
  if (typeof warmup !== 'number' || !Number.isInteger(warmup) || warmup < 0) {
    bad(`${where}.warmup must be a whole number of steps ≥ 0, got ${String(warmup)}; use 0 for no warm-up.`);
  }
  if (type === 'noam') {
    const d = s['dModel'];
    if (typeof d !== 'number' || !Number.isInteger(d) || d <= 0) {
      bad(`${where}.dModel must be the model's d_model (a positive integer), got ${String(d)}.`);
    }
    const f = s['factor'];
    if (typeof f !== 'number' || !Number.isFinite(f) || f <= 0) {
      bad(`${where}.factor must be a positive number, got ${String(f)}; the paper uses 1.`);
    }
  } else if (type === 'cosine' || type === 'restart' || type === 'wsd') {
    const start = type === 'cosine' ? 0 : s['start'];
    if (typeof start !== 'number' || !Number.isInteger(start) || start < 0) {
      bad(`${where}.start must be the step of the restart (a whole number ≥ 0), got ${String(start)}.`);
    }
    const maxSteps = s['maxSteps'];
    const least = (start as number) + (warmup as number);
    if (typeof maxSteps !== 'number' || !Number.isInteger(maxSteps) || maxSteps <= least) {
      bad(
        `${where}.maxSteps must be an integer greater than ` +
          `${type === 'cosine' ? 'warmup' : 'start + warmup'} (${least}), got ${String(maxSteps)}; ` +
          `set it to the step where the decay ends.`,
      );
    }
    const minLr = s['minLr'];
    if (typeof minLr !== 'number' || !Number.isFinite(minLr) || minLr < 0 || minLr > lr) {
      bad(`${where}.minLr must be between 0 and lr (${lr}), got ${String(minLr)}; nanoGPT uses lr / 10.`);
    }
    if (type === 'wsd') validateDecay(s, where, maxSteps as number, least, start as number);
  }
  return s as unknown as ScheduleConfig;
}
