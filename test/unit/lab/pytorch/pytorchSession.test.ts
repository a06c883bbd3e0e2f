/**
 * The PyTorch session as the training worker hosts it: pause, resume and stop reach the
 * trainer between steps (run.json and the notifications say so, no step is trained while
 * paused); the trainer's snapshot weights become snapshots with head scores; and a finished
 * run extended with more steps (a new schedule segment) trains on in PyTorch as in ours.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRunJson } from '../../../../src/lab/runs/runFolder';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import { readSnapshots } from '../../../../src/lab/runs/snapshotFiles';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { lossGap, runPath, stepLines, torchOptions, trainSession } from './torchRuns';

const until = async (check: () => boolean, what: string, ms = 120_000): Promise<void> => {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('a PyTorch session', () => {
  it('pauses, resumes and stops between steps, and draws the snapshots the trainer leaves', async () => {
    const runDir = runPath();
    const spec = trainSpecOf(
      { kind: 'task', task: 'induction' },
      { steps: 100_000, snapshotEvery: 5, evalEvery: 0, checkpointEvery: 0, batchSize: 8 },
    );
    const control = new SessionControl();
    const events: FromTrainingWorker[] = [];
    const steps = (): number => events.filter((e) => e.type === 'train/didStep').length;
    const done = trainSession(runDir, spec, { pytorch: torchOptions(), control, onEvent: (e) => events.push(e) });
    await until(() => steps() >= 6, 'six steps');
    control.pause();
    await until(() => events.some((e) => e.type === 'train/didPause'), 'train/didPause');
    expect((await readRunJson(NODE_FS, runDir)).status).toBe('paused');
    expect(fs.existsSync(path.join(runDir, 'pytorch', 'pause'))).toBe(true);
    const pausedAt = steps();
    await new Promise((r) => setTimeout(r, 1500));
    expect(steps()).toBe(pausedAt);
    control.resume();
    await until(
      () => events.some((e) => e.type === 'train/didResume') && steps() >= pausedAt + 6,
      'steps after resuming',
    );
    control.stop();
    await done;
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'train/didFinish', reason: 'stopped' });
    const run = await readRunJson(NODE_FS, runDir);
    expect(run.status).toBe('stopped');
    expect(run.step).toBe((last as { step: number }).step);
    expect(stepLines(runDir).map((s) => s.step)).toEqual(Array.from({ length: run.step }, (_, i) => i + 1));
    for (const f of ['pause', 'stop']) expect(fs.existsSync(path.join(runDir, 'pytorch', f))).toBe(false);
    // Every snapshot step became a snapshot with head scores; no weights are left waiting.
    const snaps = await readSnapshots(NODE_FS, runDir);
    expect(snaps.map((s) => s.step)).toEqual(Array.from({ length: Math.floor(run.step / 5) + 1 }, (_, i) => i * 5));
    expect(snaps.every((s) => (s.headScores?.length ?? 0) === 8)).toBe(true);
    expect(fs.readdirSync(path.join(runDir, 'snapshots')).filter((f) => f.includes('.weights.'))).toEqual([]);
    expect(events.filter((e) => e.type === 'train/didSnapshot').map((e) => (e as { step: number }).step)).toEqual(
      snaps.map((s) => s.step),
    );
  }, 300_000);

  it('extends a finished run with more steps (a new schedule segment) as our engine does', async () => {
    const spec = trainSpecOf({ kind: 'task', task: 'reverse' }, { steps: 20, snapshotEvery: 0, evalEvery: 0 });
    const ours = runPath('ours');
    const theirs = runPath('pytorch');
    await trainSession(ours, spec);
    await trainSession(ours, spec, { resume: true, extendTo: 30 });
    await trainSession(theirs, spec);
    await trainSession(theirs, spec, { resume: true, extendTo: 30, pytorch: torchOptions() });
    expect(await readRunJson(NODE_FS, theirs)).toMatchObject({
      status: 'completed',
      step: 30,
      segments: (await readRunJson(NODE_FS, ours)).segments,
    });
    expect((await readRunJson(NODE_FS, theirs)).segments).toHaveLength(2);
    expect(stepLines(theirs).map((s) => s.lr)).toEqual(stepLines(ours).map((s) => s.lr));
    expect(lossGap(stepLines(ours), stepLines(theirs))).toBeLessThan(1e-3);
  }, 300_000);
});
