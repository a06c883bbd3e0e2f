/**
 * The schedule segments of a run: its original plan (steps 0 → the planned total) and one
 * segment for each time it was extended with more steps (`train --resume DIR --steps N`,
 * "Continue Training…"). run.json keeps them (a run.json written before segments existed
 * reads as one segment); the learning rate is a function of the step and the segments, so
 * stopping anywhere (`--until`) and resuming stays bit-exact inside any segment.
 *
 * How a segment continues the one before it:
 * - AdamW + cosine: a warm restart (SGDR, Loshchilov & Hutter 2017) — warm up from lr/10 (where
 *   the cosine ended) back to the peak lr over min(the run's warm-up, 10% of the new steps),
 *   then cosine down to lr/10 at the new total. The rate is continuous at the restart.
 * - the paper's noam schedule and the constant rate (AdamW runs too short to decay) simply
 *   continue their formula in the run's global step.
 * - warmup–stable–decay (`wsd`): a new WSD segment — warm up from lr/10 back to the peak over
 *   the restart's warm-up, hold it, decay linearly to lr/10 over the new steps' last 20%.
 *
 * Leaves out: the formulas (src/engine/optim/schedule.ts) and the training loop (lab/training/session.ts).
 */

import { EngineError } from '../../engine/errors';
import type { SegmentSchedule as EngineSchedule, ScheduleConfig } from '../../engine/optim/schedule';
import { WSD_DECAY_FRACTION } from '../../engine/optim/schedule';
import type { RunSegment, SegmentSchedule, TrainSpec } from '../../protocol/data';

/** The warm-up of a run's first segment: `--warmup`, else 10% of the planned steps (1 … 4000). */
export function plannedWarmup(spec: TrainSpec, plannedSteps: number): number {
  const t = spec.training;
  return t.warmup > 0 ? t.warmup : Math.max(1, Math.min(4000, Math.round(plannedSteps / 10)));
}

/** The schedule of a new run's only segment. */
function firstSchedule(spec: TrainSpec, steps: number): SegmentSchedule {
  if (spec.training.optimizer === 'paper') return 'noam';
  const warmup = plannedWarmup(spec, steps);
  // WSD's decay (its last 20%) must start after the warm-up; shorter runs hold the rate.
  if (spec.training.schedule === 'constant') return 'constant';
  if (spec.training.schedule === 'wsd') return warmup <= steps * (1 - WSD_DECAY_FRACTION) ? 'wsd' : 'constant';
  // Cosine decay needs at least one step after the warm-up; shorter runs hold the rate.
  return steps > warmup ? 'cosine' : 'constant';
}

/** How a segment after one with schedule `prev` runs. */
function nextSchedule(prev: SegmentSchedule): SegmentSchedule {
  switch (prev) {
    case 'cosine':
    case 'restart':
      return 'restart';
    case 'noam':
    case 'constant':
    case 'wsd':
      return prev;
    default:
      return prev satisfies never;
  }
}

/** The one segment of a run that was never extended: 0 → spec.training.steps. */
export function planSegments(spec: TrainSpec): RunSegment[] {
  return [{ fromStep: 0, toStep: spec.training.steps, schedule: firstSchedule(spec, spec.training.steps) }];
}

/** `segments` with one more, from where they end to `total` (which must be beyond it). */
export function extendSegments(segments: readonly RunSegment[], total: number): RunSegment[] {
  const last = segments[segments.length - 1] as RunSegment;
  return [...segments, { fromStep: last.toStep, toStep: total, schedule: nextSchedule(last.schedule) }];
}

/** Steps of a restart's warm-up: min(the run's warm-up, 10% of the segment's steps). */
export function restartWarmup(runWarmup: number, segment: RunSegment): number {
  return Math.min(runWarmup, Math.round((segment.toStep - segment.fromStep) / 10));
}

/**
 * Why `segments` cannot belong to a run with `spec` (they must be what planning and
 * extending would have made, and end at the planned total), or null when they can.
 */
export function segmentsProblem(segments: readonly RunSegment[], spec: TrainSpec): string | null {
  const first = segments[0] as RunSegment;
  const want = firstSchedule(spec, first.toStep);
  if (first.schedule !== want)
    return (
      `segment 1 has schedule ${first.schedule}, but a run with optimizer ` +
      `${spec.training.optimizer} and ${first.toStep} steps plans ${want}`
    );
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i] as RunSegment;
    const next = nextSchedule((segments[i - 1] as RunSegment).schedule);
    if (s.schedule !== next)
      return (
        `segment ${i + 1} has schedule ${s.schedule}, but it continues a ` +
        `${(segments[i - 1] as RunSegment).schedule} segment, so it must be ${next}`
      );
  }
  const total = (segments[segments.length - 1] as RunSegment).toStep;
  if (total !== spec.training.steps)
    return `the segments end at step ${total} but spec.training.steps is ${spec.training.steps}`;
  return null;
}

/**
 * The learning-rate schedule of each segment, for the optimizer: one schedule for a run
 * never extended (exactly what it always was), else one per segment.
 */
export function segmentedSchedule(
  segments: readonly RunSegment[],
  scheduleOf: (segment: RunSegment) => EngineSchedule,
): ScheduleConfig {
  if (segments.length === 1) return scheduleOf(segments[0] as RunSegment);
  return {
    type: 'segments',
    segments: segments.map((s) => ({ fromStep: s.fromStep, toStep: s.toStep, schedule: scheduleOf(s) })),
  };
}

/** What a resume will do: train to `spec.training.steps` under `segments`, from `step`. */
export interface ResumePlan {
  readonly spec: TrainSpec;
  readonly segments: readonly RunSegment[];
  /** True when this resume adds a segment. */
  readonly extended: boolean;
}

/** The parts of run.json a resume reads. */
export interface ResumableRun {
  readonly spec: TrainSpec;
  readonly segments: readonly RunSegment[];
  readonly step: number;
  readonly status: string;
}

/**
 * Checks a resume of `run` (named `name` in messages) to `extendTo` (a new total, or null
 * for its planned total) stopping at `stopAt`, and plans it. Throws EngineError('input/invalid')
 * with one line saying what to pass instead: a total not beyond the run's step or plan, a
 * complete run with nothing to extend it by, a stop step already passed.
 */
export function planResume(
  run: ResumableRun,
  name: string,
  extendTo: number | null,
  stopAt: number | null,
): ResumePlan {
  const step = run.step;
  const planned = run.spec.training.steps;
  const refuse = (message: string): never => {
    throw new EngineError('input/invalid', message);
  };
  if (extendTo !== null && extendTo <= step)
    refuse(`${name} is already at step ${step}; pass --steps greater than ${step} to train it longer.`);
  if (extendTo !== null && extendTo <= planned) {
    refuse(
      `${name} plans ${planned} steps and is at step ${step}, so --steps ${extendTo} would not ` +
        `extend it; pass --until ${extendTo} to stop there, or --steps greater than ${planned} to ` +
        `train beyond its plan.`,
    );
  }
  // A run killed after its last checkpoint but before run.json said so is finished by the resume (no steps left).
  if (extendTo === null && step >= planned && run.status === 'completed')
    refuse(
      `${name} is complete (step ${step} of ${planned}); pass --steps N with N greater than ${step} ` +
        `to train it longer.`,
    );
  if (stopAt !== null && stopAt <= step)
    refuse(`${name} is already at step ${step}; pass --until greater than ${step}, or leave it out.`);
  if (extendTo === null) return { spec: run.spec, segments: run.segments, extended: false };
  const spec: TrainSpec = { ...run.spec, training: { ...run.spec.training, steps: extendTo } };
  return { spec, segments: extendSegments(run.segments, extendTo), extended: true };
}

/** One line for the log about a new segment: what the rate will do. */
export function describeSegment(segment: RunSegment, index: number, runWarmup: number): string {
  const what =
    segment.schedule === 'restart'
      ? `a warm restart: the learning rate warms up again over ${restartWarmup(runWarmup, segment)} ` +
        `steps to its peak, then decays (cosine) to a tenth of it at step ${segment.toStep}`
      : segment.schedule === 'noam'
        ? "the paper's schedule continues"
        : segment.schedule === 'constant'
          ? 'the learning rate stays constant'
          : segment.schedule === 'wsd'
            ? `warmup–stable–decay: the learning rate warms up again over ${restartWarmup(runWarmup, segment)} ` +
              `steps to its peak, holds it, then decays linearly to a tenth of it at step ${segment.toStep}`
            : 'cosine decay';
  return (
    `Segment ${index + 1}: steps ${segment.fromStep + 1}–${segment.toStep} ` +
    `(+${segment.toStep - segment.fromStep}), ${what}.`
  );
}
