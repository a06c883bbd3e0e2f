/**
 * "Continue Training…" asks how many more steps to train a finished or stopped run: which runs
 * can continue, the prompt (where the run stands and what the new steps add to), the check of
 * what was typed, and the new total. No VS Code import, so it is unit-tested.
 *
 * Leaves out: the input box and the training itself (trainCommand.ts), and the schedule of
 * the new steps (src/lab/runs/segments.ts).
 */

import { formatCount } from '../../common/format';
import type { RunFilter } from '../runs/pickRun';
import type { RunItem } from '../runs/runsModel';
import { isExtendable } from '../runs/runsModel';

/** The most steps one "Continue Training…" adds (the settings' largest run). */
export const MAX_MORE_STEPS = 1_000_000;

/** The runs "Continue Training…" offers, and what it says about the others. */
export const EXTENDABLE: RunFilter = {
  accept: isExtendable,
  why: (r) =>
    r.active
      ? `${r.name} is training; stop it first, then continue it.`
      : `${r.name} ${r.status === 'failed' ? 'failed' : `is ${r.status}`}; ` +
        `only a finished or stopped run can continue training.`,
  none:
    'No run can continue training now: only a finished or stopped run with a checkpoint can. ' +
    'Train one, or stop the one training.',
};

/** The input box's prompt: where the run stands, and what the new steps are added to. */
export function moreStepsPrompt(r: Pick<RunItem, 'name' | 'step' | 'totalSteps'>): string {
  if (r.step >= r.totalSteps)
    return `${r.name} finished its ${r.totalSteps} steps. How many more steps should it train?`;
  return (
    `${r.name} is at step ${r.step} of ${r.totalSteps}. How many steps beyond ${r.totalSteps}? ` +
    `(It trains to ${r.totalSteps} first.)`
  );
}

/** Why `text` is not a number of more steps (for the input box), or undefined when it is. */
export function moreStepsProblem(text: string): string | undefined {
  const t = text.trim();
  if (/^[1-9]\d*$/.test(t) && Number(t) <= MAX_MORE_STEPS) return undefined;
  return (
    `Enter how many more steps as a whole number from 1 to ${formatCount(MAX_MORE_STEPS)}` +
    `${t ? ` (not "${t.slice(0, 20)}")` : ''}.`
  );
}

/** The total a run trains to when `more` steps are added to its plan. */
export function extendedTotal(r: Pick<RunItem, 'totalSteps'>, more: number): number {
  return r.totalSteps + more;
}
