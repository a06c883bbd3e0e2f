/**
 * The modular-addition task's progress measures on a model (src/lab/evaluation/grokking.ts):
 * a short full-batch training of a small model on Z_13 raises the training accuracy the
 * measures report; and a session of the real task (p = 113, fewer rows per step) logs them with
 * each validation in metrics.jsonl and in train/didEval, as the protocol validates them.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { Trainer } from '../../../../src/engine/train';
import { Rng } from '../../../../src/engine/rng';
import { modularAlphabet, modularDataset, modularTask } from '../../../../src/lab/data/modularTask';
import { grokkingMetrics } from '../../../../src/lab/evaluation/grokking';
import { readMetrics } from '../../../../src/lab/runs/runFolder';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import {
  buildModel,
  buildOptimizer,
  modelPadId,
  optimizerConfig,
  resolveConfig,
} from '../../../../src/lab/runs/specModel';
import { validateFromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import type { TrainSpec } from '../../../../src/protocol/data';
import { nodeTestFs } from '../files/fileSystems';
import { trainInto } from '../tinyRuns';

describe('grokking measures', () => {
  it('full-batch training of a small model on Z_13 raises the training accuracy they report', () => {
    const p = 13;
    const tok = trainCharTokenizer([modularAlphabet(p)], {});
    const task = modularTask(tok, 5, p);
    const spec: TrainSpec = trainSpecOf(
      { kind: 'task', task: 'modular-addition' },
      { overrides: { dModel: 32, nHeads: 2, dFF: 64 }, lr: 1e-2, steps: 150, backend: 'reference' },
    );
    const data = modularDataset(task, 5, task.train.length);
    const cfg = resolveConfig(spec, tok.vocabSize);
    const model = buildModel(cfg, data, createReferenceBackend(), modelPadId(tok));
    model.initialize(new Rng(5));
    const trainer = new Trainer(model, buildOptimizer(model, optimizerConfig(spec, cfg)), new Rng(6));
    const before = grokkingMetrics(model, task);
    expect(before.spectrum).toHaveLength(6);
    for (let step = 1; step <= 150; step++) trainer.step(data.trainBatch(step));
    const after = grokkingMetrics(model, task);
    expect(before.trainAcc).toBeLessThan(0.3);
    expect(after.trainAcc).toBeGreaterThan(0.9);
    expect(after.trainLoss).toBeLessThan(before.trainLoss);
  });

  it('a session of the task logs them with each validation', async () => {
    const t = nodeTestFs();
    const runDir = t.fs.join(await t.dir(), 'grok');
    const spec = trainSpecOf(
      { kind: 'task', task: 'modular-addition' },
      {
        overrides: { dModel: 16, nHeads: 2, dFF: 32 },
        steps: 2,
        batchSize: 256,
        evalEvery: 1,
        snapshotEvery: 0,
        checkpointEvery: 0,
        backend: 'reference',
      },
    );
    const events = await trainInto(t, runDir, spec);
    const didEval = events.filter((e) => e.type === 'train/didEval');
    expect(didEval).toHaveLength(2);
    for (const e of didEval) expect(validateFromTrainingWorker(e)).toEqual(e);
    const { evals } = await readMetrics(t.fs, runDir);
    expect(evals.map((e) => e.step)).toEqual([1, 2]);
    const g = evals[1]?.grokking;
    if (!g) throw new Error('no grokking measures logged');
    expect(g.spectrum).toHaveLength(56);
    expect(evals[1]?.loss).toBe(g.testLoss);
    expect(evals[1]?.exactMatch).toBe(g.testAcc);
    for (const v of [g.trainAcc, g.testAcc]) expect(v).toBeGreaterThanOrEqual(0);
    for (const v of [g.trainLoss, g.testLoss, g.restrictedLoss, g.excludedLoss]) expect(v).toBeGreaterThan(0);
  });
});
