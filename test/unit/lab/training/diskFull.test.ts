/**
 * A full disk stops a training run with one line and loses nothing: at every kind of write
 * (checkpoint, optimizer state, metrics, attention snapshot, run.json) the run stops saying
 * what it was saving and which checkpoint is kept, run.json says stopped with that reason,
 * no temporary file is left, the kept checkpoint loads, and once there is space again the run
 * resumes to exactly the weights and losses of a run the disk never interrupted.
 *
 * The first test trains into a file system that really fills up: a small tmpfs where the test
 * may mount one, else the lab's file-write layer over a disk with the same room left.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { FileIo } from '../../../../src/lab/files/atomicFile.node';
import { NODE_FS, NodeFs } from '../../../../src/lab/files/fs.node';
import { openRun } from '../../../../src/lab/inference/openRun';
import { readMetrics, readRunJson } from '../../../../src/lab/runs/runFolder';
import { runSession } from '../../../../src/lab/training/session';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { StepMetrics, TrainSpec } from '../../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { failingIo, limitedIo, smallMount, tempFilesUnder } from '../fullDisk';
import { platformOf, sessionRequest } from '../tinyRuns';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-disk-full-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** The reverse task on a small model whose checkpoint pair is about 840 kB. */
const SPEC: TrainSpec = {
  model: { kind: 'encoder-decoder', preset: 'tiny', overrides: { dModel: 32, dFF: 64 } },
  tokenizer: { type: 'char', vocabSize: 1000 },
  data: { kind: 'task', task: 'reverse' },
  training: {
    steps: 40,
    batchSize: 8,
    seqLen: 16,
    evalEvery: 0,
    checkpointEvery: 10,
    snapshotEvery: 10,
    seed: 5,
    optimizer: 'adamw',
    lr: 0,
    warmup: 0,
  },
  backend: 'reference',
};

async function train(dir: string, resume: boolean, io?: FileIo): Promise<FromTrainingWorker[]> {
  const events: FromTrainingWorker[] = [];
  await runSession({
    platform: platformOf(io ? new NodeFs(io) : NODE_FS),
    request: sessionRequest(dir, SPEC, { resume }),
    control: new SessionControl(),
    emit: (m) => events.push(m),
  });
  return events;
}

function failure(events: readonly FromTrainingWorker[]): { step: number; code: string; message: string } {
  const f = events.find((e) => e.type === 'train/didFail');
  if (f?.type !== 'train/didFail') throw new Error(`the run did not fail: ${JSON.stringify(events.at(-1))}`);
  return { step: f.step, ...f.error };
}

/** What training logs of a step, without the wall-clock fields. */
function exact(m: StepMetrics): unknown {
  return [m.step, m.loss, m.lr, m.gradNorm, m.tokens];
}

const reference = path.join(root, 'reference');
beforeAll(async () => {
  const events = await train(reference, false);
  expect(events.at(-1)).toEqual({ type: 'train/didFinish', step: 40, reason: 'completed' });
}, 60_000);

/**
 * After the disk filled while writing `what` at `step`: the one-line reason, run.json, no
 * temporary files, the kept checkpoint; then resumes (with room again) and checks the result.
 */
async function expectStoppedAndResumable(
  dir: string,
  events: readonly FromTrainingWorker[],
  what: string,
  step: number,
  kept: number,
): Promise<void> {
  const f = failure(events);
  const message = `Disk full while ${what} in ${dir}; the checkpoint of step ${kept} is kept — free space and \`train --resume ${dir}\`.`;
  expect(f).toEqual({ step, code: 'disk/full', message });
  const run = await readRunJson(NODE_FS, dir);
  expect(run.status).toBe('stopped');
  expect(run.error).toEqual({ code: 'disk/full', message });
  expect(run.step).toBe(kept);
  expect(tempFilesUnder(dir)).toEqual([]);
  expect((await openRun(NODE_FS, dir, createReferenceBackend())).step).toBe(kept);
  const text = fs.readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8');
  expect(text.endsWith('\n')).toBe(true); // no torn line: a failed append was cut back
  expect((await readMetrics(NODE_FS, dir)).skipped).toBe(0);

  const resumed = await train(dir, true);
  expect(resumed.find((e) => e.type === 'train/didStart')).toMatchObject({ startStep: kept });
  expect(resumed.at(-1)).toEqual({ type: 'train/didFinish', step: 40, reason: 'completed' });
  for (const file of ['model.safetensors', 'optimizer.safetensors']) {
    expect(
      fs.readFileSync(path.join(dir, file)).equals(fs.readFileSync(path.join(reference, file))),
      `${file} is bit-exact`,
    ).toBe(true);
  }
  expect((await readMetrics(NODE_FS, dir)).steps.map(exact)).toEqual(
    (await readMetrics(NODE_FS, reference)).steps.map(exact),
  );
  expect(await readRunJson(NODE_FS, dir)).toMatchObject({ status: 'completed', step: 40, error: null });
}

describe('a full disk while training', () => {
  it('on a file system that fills up: stops at the checkpoint that does not fit and resumes exactly once there is room', async () => {
    // 1300 kB: the first checkpoint pair fits, the second (written beside the first) does not.
    const mount = smallMount(1300);
    const io = mount ? undefined : limitedIo(1300 * 1024);
    const dir = path.join(mount?.dir ?? root, 'small-disk');
    try {
      const events = await train(dir, false, io);
      const f = failure(events);
      expect(f.message).not.toMatch(/\n/);
      expect(f.message).toMatch(
        /^Disk full while saving the checkpoint at step 20 in .*; the checkpoint of step 10 is kept — free space and `train --resume .*`\.$/,
      );
      // Space comes back: the mount grows (or the simulated disk does), then the run resumes.
      if (mount) {
        expect(tempFilesUnder(dir)).toEqual([]);
        mount.grow(8192);
      } else if (io) io.free = Number.POSITIVE_INFINITY;
      await expectStoppedAndResumable(dir, events, 'saving the checkpoint at step 20', 20, 10);
    } finally {
      mount?.unmount();
    }
  }, 60_000);

  const cases: { kind: string; pick: (f: string) => boolean; nth: number; what: string; step: number; kept: number }[] =
    [
      {
        kind: 'model.safetensors',
        pick: (f) => f.includes('.model.safetensors.'),
        nth: 3,
        what: 'saving the checkpoint at step 30',
        step: 30,
        kept: 20,
      },
      {
        kind: 'optimizer.safetensors',
        pick: (f) => f.includes('.optimizer.safetensors.'),
        nth: 2,
        what: 'saving the checkpoint at step 20',
        step: 20,
        kept: 10,
      },
      {
        kind: 'metrics.jsonl',
        pick: (f) => f.endsWith('metrics.jsonl'),
        nth: 25,
        what: 'logging the metrics of step 25',
        step: 25,
        kept: 20,
      },
      {
        kind: 'a snapshot',
        pick: (f) => f.includes(`${path.sep}snapshots${path.sep}`),
        nth: 3,
        what: 'saving the attention snapshot of step 20',
        step: 20,
        kept: 10,
      },
      {
        kind: 'run.json',
        pick: (f) => f.includes('.run.json.'),
        nth: 3,
        what: 'updating run.json at step 20',
        step: 20,
        kept: 20,
      },
    ];
  for (const c of cases) {
    it(`at ${c.kind}: stops with the one-line reason, keeps the last checkpoint, leaves no temporary file, resumes bit-exactly`, async () => {
      const dir = path.join(root, c.kind.replace(/\W+/g, '-'));
      const io = failingIo(c.pick, c.nth);
      const events = await train(dir, false, io);
      expect(io.failed, 'the write was made and failed').not.toBeNull();
      await expectStoppedAndResumable(dir, events, c.what, c.step, c.kept);
    }, 60_000);
  }

  it('before the first checkpoint of a new run: says nothing was kept and leaves no folder behind', async () => {
    const dir = path.join(root, 'early');
    const events = await train(
      dir,
      false,
      failingIo((f) => f.endsWith('metrics.jsonl'), 3),
    );
    expect(failure(events)).toEqual({
      step: 3,
      code: 'disk/full',
      message: `Disk full while logging the metrics of step 3 in ${dir}; nothing was kept — free space and train again.`,
    });
    expect(fs.existsSync(dir)).toBe(false);
  });
});
