/**
 * The PyTorch trainer draws exactly our batches and steps with exactly our learning rates:
 * its ports (python/attention_lab_trainer/rng.py, data.py, schedule.py) against
 * the TypeScript they port, for 200 steps of each sampler — documents (random windows of a
 * memory-mapped stream), pairs (token-budget runs of length-sorted examples), the induction
 * task (chains and repeats drawn per step) — read from a run folder the lab prepared.
 */

import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { learningRate } from '../../../../src/engine/optim/schedule';
import type { ScheduleConfig } from '../../../../src/engine/optim/schedule';
import { preparePytorchRun } from '../../../../src/lab/pytorch/pytorchSession.node';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { TrainSpec } from '../../../../src/protocol/data';
import { TRAINER_DIR, python, runPath } from './torchRuns';

const STEPS = 200;
const FIXTURE = path.resolve(__dirname, '../../../fixtures/text/state-of-the-union-1790-1809.txt');

/** Batches 1…STEPS as the Python sampler of the prepared folder draws them. */
function pythonBatches(runDir: string): Record<string, number[][]>[] {
  const out = python(`
import json
from attention_lab_trainer.data import train_batches
folder = ${JSON.stringify(path.join(runDir, 'pytorch'))}
m = json.load(open(folder + "/manifest.json"))
s = train_batches(folder, m)
print(json.dumps([{k: t.tolist() for k, t in s.batch(step).items()} for step in range(1, ${STEPS + 1})]))`);
  return JSON.parse(out) as Record<string, number[][]>[];
}

async function samePython(spec: TrainSpec): Promise<number> {
  const runDir = runPath();
  const { prepared } = await preparePytorchRun({
    runDir,
    spec,
    resume: false,
    stopAt: null,
    extendTo: null,
    control: new SessionControl(),
    emit: () => undefined,
    trainerDir: TRAINER_DIR,
  });
  const py = pythonBatches(runDir);
  let rows = 0;
  for (let step = 1; step <= STEPS; step++) {
    const b = prepared.dataset.trainBatch(step);
    const rowsOf = (a: Int32Array | undefined, width: number): number[][] =>
      Array.from({ length: b.B }, (_, r) => Array.from((a as Int32Array).subarray(r * width, (r + 1) * width)));
    const want: Record<string, number[][]> = {
      input: rowsOf(b.input, b.T),
      targets: rowsOf(b.targets, b.T),
      ...(b.src ? { src: rowsOf(b.src, b.S as number) } : {}),
    };
    expect(py[step - 1], `step ${step}`).toEqual(want);
    rows += b.B;
  }
  return rows;
}

describe('the PyTorch trainer draws our batches', () => {
  it('documents: the same random windows of the training stream for 200 steps', async () => {
    const spec = trainSpecOf(
      { kind: 'documents', files: [FIXTURE], root: path.dirname(FIXTURE) },
      { steps: 300, batchSize: 6, seqLen: 24, seed: 7 },
    );
    expect(await samePython(spec)).toBe(STEPS * 6);
  });

  it('pairs: the same token-budget runs of length-sorted examples (rows vary per step)', async () => {
    const spec = trainSpecOf({ kind: 'task', task: 'reverse' }, { steps: 300, batchSize: 5, seed: 11 });
    expect(await samePython(spec)).toBeGreaterThan(STEPS * 5);
  });

  it('the induction task: the same chains and repeats, drawn afresh each step', async () => {
    const spec = trainSpecOf({ kind: 'task', task: 'induction' }, { steps: 300, batchSize: 4, seqLen: 20, seed: -3 });
    expect(await samePython(spec)).toBe(STEPS * 4);
  });
});

describe('the PyTorch trainer steps with our learning rates', () => {
  const cases: { name: string; lr: number; schedule: ScheduleConfig }[] = [
    { name: 'noam', lr: 1, schedule: { type: 'noam', warmup: 40, dModel: 64, factor: 2 } },
    { name: 'noam without warm-up', lr: 1, schedule: { type: 'noam', warmup: 0, dModel: 64, factor: 1 } },
    { name: 'cosine', lr: 3e-3, schedule: { type: 'cosine', warmup: 20, maxSteps: 150, minLr: 3e-4 } },
    { name: 'constant', lr: 1e-3, schedule: { type: 'constant', warmup: 10 } },
    {
      name: 'wsd: warm-up, plateau, linear decay; then a wsd extension',
      lr: 2e-3,
      schedule: {
        type: 'segments',
        segments: [
          {
            fromStep: 0,
            toStep: 130,
            schedule: { type: 'wsd', start: 0, warmup: 15, maxSteps: 130, minLr: 2e-4, decayFraction: 0.2 },
          },
          {
            fromStep: 130,
            toStep: 190,
            schedule: { type: 'wsd', start: 130, warmup: 6, maxSteps: 190, minLr: 2e-4, decayFraction: 0.3 },
          },
        ],
      },
    },
    {
      name: 'segments: cosine, then a warm restart',
      lr: 1e-3,
      schedule: {
        type: 'segments',
        segments: [
          { fromStep: 0, toStep: 100, schedule: { type: 'cosine', warmup: 10, maxSteps: 100, minLr: 1e-4 } },
          {
            fromStep: 100,
            toStep: 180,
            schedule: { type: 'restart', start: 100, warmup: 8, maxSteps: 180, minLr: 1e-4 },
          },
        ],
      },
    },
  ];
  it.each(cases)('$name', ({ lr, schedule }) => {
    const steps = Array.from({ length: STEPS }, (_, i) => i + 1);
    const got = JSON.parse(
      python(
        'import json\nfrom attention_lab_trainer.schedule import learning_rate\ncfg = json.load(sys.stdin)\nprint(json.dumps([learning_rate(cfg, s) for s in range(1, 201)]))',
        JSON.stringify({ lr, schedule }),
      ),
    ) as number[];
    const want = steps.map((s) => learningRate({ lr, schedule }, s));
    got.forEach((g, i) => expect(g, `step ${i + 1}`).toBeCloseTo(want[i] as number, 15));
  });
});
