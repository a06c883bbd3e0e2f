/**
 * The training session in-process, on every file system the lab runs on (Node's, memory,
 * a web worker's channel to its host): pause, resume and stop between steps; a non-finite
 * loss stops the run naming the step, and leaves the last good checkpoint loadable;
 * extending a run.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { TrainSpec } from '../../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { validateFromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { readText, writeFile } from '../../../../src/lab/files/labFs';
import { openRun } from '../../../../src/lab/inference/openRun';
import { loadRunState } from '../../../../src/lab/runs/runState';
import { readRunJson, writeRunJson } from '../../../../src/lab/runs/runFolder';
import type { BuiltinStart } from '../../../../src/lab/training/session';
import { runSession as run } from '../../../../src/lab/training/session';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import { FILE_SYSTEMS } from '../files/fileSystems';
import { platformOf, sessionRequest } from '../tinyRuns';

function spec(over: Partial<TrainSpec['training']> = {}): TrainSpec {
  return {
    model: {
      kind: 'encoder-decoder',
      preset: 'tiny',
      overrides: { dModel: 16, nHeads: 2, dFF: 32, nEncoderLayers: 1, nDecoderLayers: 1 },
    },
    tokenizer: { type: 'char', vocabSize: 1000 },
    data: { kind: 'task', task: 'copy' },
    training: {
      steps: 40,
      batchSize: 4,
      seqLen: 16,
      evalEvery: 0,
      checkpointEvery: 5,
      snapshotEvery: 10,
      seed: 3,
      optimizer: 'adamw',
      lr: 0,
      warmup: 0,
      ...over,
    },
    backend: 'reference',
  };
}

describe.each(FILE_SYSTEMS)('training session on $name', ({ make }) => {
  const { fs, dir: fresh } = make();
  let root = '';
  beforeAll(async () => {
    root = await fresh();
  });
  const runSession = (start: Omit<BuiltinStart, 'platform'>): Promise<void> =>
    run({ ...start, platform: platformOf(fs) });

  it('a stop while the data is prepared ends the session there: cancelled, nothing trained, the new folder gone', async () => {
    const dir = fs.join(root, 'cancelled');
    const control = new SessionControl();
    const events: FromTrainingWorker[] = [];
    control.stop(); // as a cancel that arrives during "Encoding … 100%"
    await runSession({
      request: sessionRequest(dir, spec()),
      control,
      emit: (m) => events.push(validateFromTrainingWorker(m)),
    });
    expect(events.some((e) => e.type === 'train/didStart' || e.type === 'train/didStep')).toBe(false);
    const fail = events.find((e) => e.type === 'train/didFail');
    expect(fail?.type === 'train/didFail' ? fail.error.code : null).toBe('cancelled');
    expect(await fs.stat(dir)).toBeNull();
  });
  it('pauses, resumes and stops between steps, saving a checkpoint on stop', async () => {
    const dir = fs.join(root, 'controlled');
    const control = new SessionControl();
    const events: FromTrainingWorker[] = [];
    const done = runSession({
      request: sessionRequest(dir, spec()),
      control,
      emit: (m) => {
        events.push(validateFromTrainingWorker(m));
        if (m.type === 'train/didStep' && m.step === 3) control.pause();
        if (m.type === 'train/didPause') setTimeout(() => control.resume(), 20);
        if (m.type === 'train/didStep' && m.step === 6) control.stop();
      },
    });
    await done;
    const types = events.map((e) => e.type).filter((t) => t !== 'train/didProgress' && t !== 'train/didLog');
    expect(types[0]).toBe('train/didStart');
    expect(types).toContain('train/didPause');
    expect(types).toContain('train/didResume');
    expect(types.indexOf('train/didPause')).toBeLessThan(types.indexOf('train/didResume'));
    const fin = events.find((e) => e.type === 'train/didFinish');
    expect(fin).toEqual({ type: 'train/didFinish', step: 6, reason: 'stopped' });
    expect((await readRunJson(fs, dir)).status).toBe('stopped');
    expect((await openRun(fs, dir, createReferenceBackend())).step).toBe(6);
    const state = await loadRunState(fs, dir);
    expect(state.steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(state.snapshots.map((s) => s.step)).toEqual([0]);
    expect(state.run.status).toBe('stopped');
    expect(state.snapshots[0]?.maps.length).toBe(3); // encoder self, decoder self, cross
    expect(state.snapshots[0]?.masks.map((m) => m.name)).toEqual([
      'source.padding',
      'target.padding',
      'decoder.causal',
      'decoder.self',
    ]);
  });

  it('scores every head at each snapshot, unless the benchmark turns scores off', async () => {
    const run = async (name: string, headScores?: boolean): Promise<Awaited<ReturnType<typeof loadRunState>>> => {
      const dir = fs.join(root, name);
      await runSession({
        request: sessionRequest(dir, spec({ steps: 10, checkpointEvery: 0 })),
        control: new SessionControl(),
        emit: () => undefined,
        options: headScores === undefined ? {} : { headScores },
      });
      return loadRunState(fs, dir);
    };
    const on = await run('scores-on');
    const off = await run('scores-off', false);
    expect(on.snapshots.map((s) => s.step)).toEqual([0, 10]);
    expect(on.snapshots[1]?.headScores?.map((x) => x.stack)).toEqual([
      'encoder.self',
      'encoder.self',
      'decoder.self',
      'decoder.self',
      'decoder.cross',
      'decoder.cross',
    ]);
    expect(off.snapshots.map((s) => s.step)).toEqual([0, 10]);
    expect(off.snapshots.every((s) => s.headScores === undefined)).toBe(true);
    // The same maps either way: scoring reads them, it does not change the training.
    expect(off.snapshots[1]?.maps[0]?.data).toEqual(on.snapshots[1]?.maps[0]?.data);
  });

  it('records the backend that ran, which the run summary shows instead of "auto"', async () => {
    const dir = fs.join(root, 'auto-backend');
    const events: FromTrainingWorker[] = [];
    await runSession({
      request: sessionRequest(dir, { ...spec({ steps: 2, checkpointEvery: 1 }), backend: 'auto' }),
      control: new SessionControl(),
      emit: (m) => events.push(m),
    });
    const start = events.find((e) => e.type === 'train/didStart');
    if (start?.type !== 'train/didStart') throw new Error('no train/didStart');
    expect(start.model.backend).not.toBe('auto');
    const run = await readRunJson(fs, dir);
    expect(run.backendUsed).toBe(start.model.backend);
    expect((await loadRunState(fs, dir)).run.model?.backend).toBe(start.model.backend);
    // A run.json from before the backend was recorded shows the backend that will run it: "auto" is wasm where the runtime has it.
    const { backendUsed: _dropped, ...old } = run;
    await writeRunJson(fs, dir, old);
    expect((await loadRunState(fs, dir)).run.model?.backend).toBe(
      old.spec.backend === 'auto' ? 'wasm' : old.spec.backend,
    );
    await writeFile(fs, fs.join(dir, 'run.json'), JSON.stringify({ ...old, backendUsed: 7 }));
    await expect(readRunJson(fs, dir)).rejects.toThrow(/backendUsed that is not a string \(7\)/);
  });

  it('stops on a non-finite loss naming the step, keeping the last good checkpoint loadable', async () => {
    const dir = fs.join(root, 'diverged');
    const events: FromTrainingWorker[] = [];
    await runSession({
      request: sessionRequest(dir, spec({ optimizer: 'paper', lr: 1e38, warmup: 1, checkpointEvery: 1, steps: 50 })),
      control: new SessionControl(),
      emit: (m) => events.push(m),
    });
    const fail = events.find((e) => e.type === 'train/didFail');
    expect(fail, 'the run should diverge').toBeDefined();
    if (fail?.type !== 'train/didFail') return;
    expect(fail.error.code).toBe('train/nonFinite');
    expect(fail.error.message).toMatch(new RegExp(`step ${fail.step + 1}|step ${fail.step}`));
    expect(fail.error.message).toMatch(/learning rate/i);
    expect(fail.error.message).toMatch(/last good checkpoint \(step \d+\) is kept/);
    const run = await readRunJson(fs, dir);
    expect(run.status).toBe('failed');
    const opened = await openRun(fs, dir, createReferenceBackend());
    expect(opened.step).toBe(run.step);
    expect(Array.from(opened.model.params).every(Number.isFinite)).toBe(true);
  });

  it('refuses to start a new run in a folder that holds one, without touching it', async () => {
    const dir = fs.join(root, 'controlled');
    const before = await readText(fs, fs.join(dir, 'run.json'));
    const events: FromTrainingWorker[] = [];
    await runSession({
      request: sessionRequest(dir, spec()),
      control: new SessionControl(),
      emit: (m) => events.push(m),
    });
    const fail = events.find((e) => e.type === 'train/didFail');
    expect(fail?.type === 'train/didFail' && fail.error.message).toMatch(/already holds a run; pass --resume/);
    expect(await readText(fs, fs.join(dir, 'run.json'))).toBe(before);
  });

  it('continues the metrics from the last step, records both segments and restarts the schedule warm', async () => {
    const dir = fs.join(root, 'extended');
    const first: FromTrainingWorker[] = [];
    await runSession({
      request: sessionRequest(dir, spec({ steps: 20, checkpointEvery: 0 })),
      control: new SessionControl(),
      emit: (m) => first.push(validateFromTrainingWorker(m)),
    });
    expect(first.at(-1)).toEqual({ type: 'train/didFinish', step: 20, reason: 'completed' });
    // As a run.json from before segments existed: it reads as one segment and extends the same.
    const file = fs.join(dir, 'run.json');
    const { segments: _segments, ...old } = JSON.parse(await readText(fs, file)) as Record<string, unknown>;
    await writeFile(fs, file, JSON.stringify(old));
    const events: FromTrainingWorker[] = [];
    await runSession({
      request: sessionRequest(dir, spec(), { resume: true, extendTo: 40 }),
      control: new SessionControl(),
      emit: (m) => events.push(validateFromTrainingWorker(m)),
    });
    const start = events.find((e) => e.type === 'train/didStart');
    const segments = [
      { fromStep: 0, toStep: 20, schedule: 'cosine' },
      { fromStep: 20, toStep: 40, schedule: 'restart' },
    ];
    expect(start).toMatchObject({ startStep: 20, totalSteps: 40, segments });
    expect(
      events.some(
        (e) =>
          e.type === 'train/didLog' &&
          /Extended to 40 steps\. Segment 2: steps 21–40 \(\+20\), a warm restart/.test(e.message),
      ),
    ).toBe(true);
    expect(events.at(-1)).toEqual({ type: 'train/didFinish', step: 40, reason: 'completed' });
    const run = await readRunJson(fs, dir);
    expect([run.status, run.step, run.spec.training.steps]).toEqual(['completed', 40, 40]);
    expect(run.segments).toEqual(segments);
    const state = await loadRunState(fs, dir);
    expect(state.run).toMatchObject({ totalSteps: 40, segments });
    expect(state.steps.map((x) => x.step)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const losses = state.steps.map((x) => x.loss);
    expect(losses.every(Number.isFinite)).toBe(true);
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(losses.slice(-5))).toBeLessThan(mean(losses.slice(0, 5)));
    // Every segment's last step is evaluated (evalEvery is 0 here).
    expect(state.evals.map((e) => e.step)).toEqual([20, 40]);
    const lr = state.steps.map((x) => x.lr);
    const peak = Math.max(...lr);
    expect(lr[19]).toBeCloseTo(peak / 10, 12); // the plan ended at minLr…
    expect(lr[20]).toBeGreaterThan(lr[19] as number); // …and the restart warms up again
    expect(lr[21]).toBeCloseTo(peak, 12); // to the peak after min(2, 10% of 20) = 2 steps
    expect(lr[39]).toBeCloseTo(peak / 10, 12);
  });

  it('refuses a total that would not extend the run, leaving it as it was', async () => {
    const dir = fs.join(root, 'extended');
    const before = await readText(fs, fs.join(dir, 'run.json'));
    const events: FromTrainingWorker[] = [];
    await runSession({
      request: sessionRequest(dir, spec(), { resume: true, extendTo: 30 }),
      control: new SessionControl(),
      emit: (m) => events.push(m),
    });
    const fail = events.find((e) => e.type === 'train/didFail');
    expect(fail?.type === 'train/didFail' && fail.error).toEqual({
      code: 'input/invalid',
      message: 'extended is already at step 40; pass --steps greater than 40 to train it longer.',
    });
    expect(await readText(fs, fs.join(dir, 'run.json'))).toBe(before);
  });
});
