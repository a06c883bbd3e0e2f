/**
 * Muon's state is not AdamW's: resuming a run whose optimizer.safetensors was written by one
 * with the other is refused in one line, before anything trains, saying what to do.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOptimizerKind } from '../../../../src/lab/runs/checkpoint';
import { readRunJson } from '../../../../src/lab/runs/runFolder';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import type { TrainSpec } from '../../../../src/protocol/data';
import { runPath, stepLines, trainSession } from '../pytorch/torchRuns';

const config = (type: string): string => JSON.stringify({ type, lr: 1e-3 });

describe('checkOptimizerKind', () => {
  it('accepts the same kind of state: muon after muon, adam or adamw after either, and old files (Adam)', () => {
    expect(() => checkOptimizerKind('o', config('muon'), 'muon')).not.toThrow();
    expect(() => checkOptimizerKind('o', config('adam'), 'adamw')).not.toThrow();
    expect(() => checkOptimizerKind('o', config('adamw'), 'adam')).not.toThrow();
    expect(() => checkOptimizerKind('o', undefined, 'adamw')).not.toThrow();
  });

  it('refuses AdamW state for Muon and Muon state for AdamW, naming the preset to resume with', () => {
    expect(() => checkOptimizerKind('optimizer.safetensors', config('adamw'), 'muon')).toThrow(
      "optimizer.safetensors holds AdamW's optimizer state but this run now trains with Muon; resume it with " +
        'optimizer adamw (training.optimizer in run.json), or start a new run to train with muon.',
    );
    expect(() => checkOptimizerKind('o', config('muon'), 'adamw')).toThrow(
      /holds Muon's optimizer state but this run now trains with AdamW; resume it with optimizer muon/,
    );
    expect(() => checkOptimizerKind('o', config('adam'), 'muon')).toThrow(/holds Adam's .*optimizer paper/);
    expect(() => checkOptimizerKind('o', undefined, 'muon')).toThrow(/holds AdamW's/);
    expect(() => checkOptimizerKind('o', '{', 'muon')).toThrow(/unreadable optimizer config/);
  });
});

/** Trains `spec` to step 2 of 4, switches run.json's optimizer to `then`, and resumes. */
async function switchAndResume(first: TrainSpec['training']['optimizer'], then: TrainSpec['training']['optimizer']) {
  const spec = trainSpecOf(
    { kind: 'task', task: 'reverse' },
    { steps: 4, snapshotEvery: 0, evalEvery: 0, checkpointEvery: 0, optimizer: first },
  );
  const runDir = runPath();
  await trainSession(runDir, spec, { stopAt: 2 });
  const file = path.join(runDir, 'run.json');
  const run = JSON.parse(fs.readFileSync(file, 'utf8')) as { spec: TrainSpec };
  const edited: TrainSpec = { ...run.spec, training: { ...run.spec.training, optimizer: then } };
  fs.writeFileSync(file, JSON.stringify({ ...run, spec: edited }));
  const before = fs.readFileSync(path.join(runDir, 'model.safetensors'));
  const error = await trainSession(runDir, edited, { resume: true }).then(
    () => null,
    (e: Error) => e.message,
  );
  return { runDir, error, before };
}

describe('resuming with the other optimizer', () => {
  it('AdamW state, Muon run: refused before a step, the checkpoint and metrics as they were', async () => {
    const { runDir, error, before } = await switchAndResume('adamw', 'muon');
    expect(error).toContain("holds AdamW's optimizer state but this run now trains with Muon; resume it with");
    expect(stepLines(runDir).map((s) => s.step)).toEqual([1, 2]);
    expect(fs.readFileSync(path.join(runDir, 'model.safetensors')).equals(before)).toBe(true);
    expect((await readRunJson(NODE_FS, runDir)).step).toBe(2);
  }, 120_000);

  it('Muon state, AdamW run: refused the same way', async () => {
    const { error } = await switchAndResume('muon', 'adamw');
    expect(error).toContain(
      "holds Muon's optimizer state but this run now trains with AdamW; resume it with optimizer muon",
    );
  }, 120_000);

  it('a Muon run resumed as Muon continues exactly as one that never stopped', async () => {
    const spec = trainSpecOf(
      { kind: 'task', task: 'reverse' },
      { steps: 4, snapshotEvery: 0, evalEvery: 0, checkpointEvery: 0, optimizer: 'muon', schedule: 'wsd' },
    );
    const straight = runPath('straight');
    await trainSession(straight, spec);
    const stopped = runPath('stopped');
    await trainSession(stopped, spec, { stopAt: 2 });
    await trainSession(stopped, spec, { resume: true });
    expect(stepLines(stopped).map((s) => s.loss)).toEqual(stepLines(straight).map((s) => s.loss));
    expect(stepLines(stopped).map((s) => s.lr)).toEqual(stepLines(straight).map((s) => s.lr));
    // WSD over 4 steps: warm-up 1, the peak held, then down to a tenth at the last step.
    expect((await readRunJson(NODE_FS, straight)).segments).toEqual([{ fromStep: 0, toStep: 4, schedule: 'wsd' }]);
    const lrs = stepLines(straight).map((s) => s.lr);
    expect(lrs[1]).toBe(lrs[0]);
    expect(lrs[3]).toBeCloseTo((lrs[0] as number) / 10, 12);
  }, 120_000);
});
