import { describe, expect, it } from 'vitest';
import { shownRunState } from '../../../src/protocol/runStatus';

describe('shownRunState: one state and step for a run, wherever it is shown', () => {
  it('shows a run that trains now as training or paused, at the later of its checkpoint and live step', () => {
    expect(shownRunState({ status: 'training', step: 120 }, { step: 137, paused: false })).toEqual({
      status: 'training',
      step: 137,
    });
    expect(shownRunState({ status: 'paused', step: 120 }, { step: 130, paused: true })).toEqual({
      status: 'paused',
      step: 130,
    });
    // Right after a resume the worker has not reported a step yet: the checkpoint's step.
    expect(shownRunState({ status: 'stopped', step: 120 }, { step: 0, paused: false })).toEqual({
      status: 'training',
      step: 120,
    });
  });

  it('shows a run.json that says training or paused, with nothing training it, as interrupted at its last checkpoint', () => {
    // Checkpoint at 120, metrics logged to 137, then the window reloaded.
    expect(shownRunState({ status: 'training', step: 120 }, null)).toEqual({ status: 'interrupted', step: 120 });
    expect(shownRunState({ status: 'paused', step: 120 }, null)).toEqual({ status: 'interrupted', step: 120 });
    // Applying the rule twice (the report page applies it to what a host already decided) changes nothing.
    expect(shownRunState({ status: 'interrupted', step: 120 }, null)).toEqual({ status: 'interrupted', step: 120 });
  });

  it('shows stopped, finished, failed and new runs as run.json says', () => {
    for (const status of ['stopped', 'completed', 'failed', 'created'] as const) {
      expect(shownRunState({ status, step: 40 }, null)).toEqual({ status, step: 40 });
    }
  });
});
