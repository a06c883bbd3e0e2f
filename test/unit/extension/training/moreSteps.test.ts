import { describe, expect, it } from 'vitest';
import {
  EXTENDABLE,
  MAX_MORE_STEPS,
  extendedTotal,
  moreStepsProblem,
  moreStepsPrompt,
} from '../../../../src/extension/training/moreSteps';
import type { RunItem } from '../../../../src/extension/runs/runsModel';

const item = (over: Partial<RunItem>): RunItem => ({
  runDir: '/r/a',
  name: 'run-a',
  status: 'completed',
  kind: 'decoder-only',
  step: 2000,
  totalSteps: 2000,
  bestValLoss: 2,
  hasModel: true,
  active: false,
  params: 1,
  data: null,
  imported: null,
  error: null,
  note: null,
  backend: null,
  ...over,
});

describe('Continue Training… input', () => {
  it('says where the run stands and what the new steps add to', () => {
    expect(moreStepsPrompt(item({}))).toBe('run-a finished its 2000 steps. How many more steps should it train?');
    expect(moreStepsPrompt(item({ status: 'stopped', step: 800 }))).toBe(
      'run-a is at step 800 of 2000. How many steps beyond 2000? (It trains to 2000 first.)',
    );
  });

  it('accepts a positive whole number of steps up to the largest run', () => {
    for (const ok of ['1', '500', ' 2000 ', String(MAX_MORE_STEPS)]) expect(moreStepsProblem(ok), ok).toBeUndefined();
    for (const bad of ['', '0', '-5', '1.5', '1e3', 'lots', '007', String(MAX_MORE_STEPS + 1)])
      expect(moreStepsProblem(bad), bad).toMatch(/^Enter how many more steps as a whole number from 1 to 1,000,000/);
    expect(moreStepsProblem('lots')).toContain('(not "lots")');
  });

  it('adds the steps to the planned total, so a stopped run finishes its plan first', () => {
    expect(extendedTotal(item({}), 500)).toBe(2500);
    expect(extendedTotal(item({ status: 'stopped', step: 800 }), 500)).toBe(2500);
  });

  it('offers finished, stopped and interrupted runs, and says why not the others', () => {
    expect(EXTENDABLE.accept(item({}))).toBe(true);
    expect(EXTENDABLE.accept(item({ status: 'failed' }))).toBe(false);
    expect(EXTENDABLE.why(item({ status: 'failed' }))).toBe(
      'run-a failed; only a finished or stopped run can continue training.',
    );
    expect(EXTENDABLE.why(item({ status: 'training', active: true }))).toMatch(/is training; stop it first/);
  });
});
