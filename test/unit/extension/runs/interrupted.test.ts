import { describe, expect, it } from 'vitest';
import { announceInterrupted, interruptedMessage } from '../../../../src/extension/runs/interrupted';
import type { RunItem } from '../../../../src/extension/runs/runsModel';
import { Memento } from '../memento';

const item = (over: Partial<RunItem>): RunItem => ({
  runDir: '/r/a',
  name: 'a',
  status: 'completed',
  kind: 'decoder-only',
  step: 60,
  totalSteps: 60,
  bestValLoss: 1,
  hasModel: true,
  active: false,
  params: 1,
  data: null,
  imported: null,
  error: null,
  note: null,
  backend: 'wasm',
  ...over,
});

describe('announcing interrupted runs', () => {
  it('announces each interruption once, with Resume when there is a checkpoint, and resumes the run asked for', async () => {
    const state = new Memento();
    const shown: [string, string[]][] = [];
    const resumed: string[] = [];
    let press: string | undefined = 'Resume';
    const warn = (m: string, ...a: string[]): Thenable<string | undefined> => {
      shown.push([m, a]);
      return Promise.resolve(press !== undefined && a.includes(press) ? press : undefined);
    };
    const x = item({ runDir: '/r/x', name: 'x', status: 'interrupted', step: 120, totalSteps: 200 });
    const runs = [
      x,
      item({ runDir: '/r/done' }),
      item({ runDir: '/r/y', name: 'y', status: 'interrupted', step: 0, hasModel: false }),
    ];
    const msgs = await announceInterrupted(state, runs, warn, (r) => resumed.push(r.runDir));
    await Promise.resolve();
    expect(msgs).toEqual([
      'Training of run x was interrupted at step 120 (last checkpoint).',
      interruptedMessage(runs[2] as RunItem),
    ]);
    expect(shown.map(([, a]) => a)).toEqual([['Resume'], []]);
    expect(resumed).toEqual(['/r/x']);
    // The next start (another reload) does not repeat them…
    press = undefined;
    expect(await announceInterrupted(state, runs, warn, () => undefined)).toEqual([]);
    // …but the same run interrupted again at a later checkpoint is news.
    expect(await announceInterrupted(state, [{ ...x, step: 160 }], warn, () => undefined)).toEqual([
      'Training of run x was interrupted at step 160 (last checkpoint).',
    ]);
  });
});
