import { describe, expect, it } from 'vitest';
import { benchTaskSpec } from '../../../../src/bench/benchScores';
import { parseFlags } from '../../../../src/cli/args';
import { TRAIN_FLAGS, specFromFlags } from '../../../../src/cli/train';
import { DEFAULT_SETTINGS, readSettings, specFromSettings } from '../../../../src/extension/base/settings';
import type { Settings } from '../../../../src/extension/base/settings';
import { resolveConfig } from '../../../../src/lab/runs/specModel';
import { TASK_RUNS, dataDefaults, trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { taskInfo } from '../../../../src/lab/data/tasks';
import type { TaskName, TrainSpec } from '../../../../src/protocol/data';
import { TASK_MODEL_KINDS, TASK_NAMES, trainSpec } from '../../../../src/protocol/data';

const cliSpec = (argv: string[]): Promise<TrainSpec> =>
  specFromFlags(parseFlags('train', argv, TRAIN_FLAGS, 64), process.cwd());
/** The spec the extension's Train makes for settings given as `attentionLab.*` keys (the rest unset). */
const extSpec = (values: Record<string, unknown>): TrainSpec => {
  const { settings, problems } = readSettings((k) => values[k]);
  expect(problems).toEqual([]);
  const s: Settings = settings;
  return specFromSettings(s, { kind: 'task', task: s.data.task });
};

describe('dataDefaults', () => {
  it('gives documents a decoder-only model, pairs an encoder-decoder, and each task its own kind and run', () => {
    expect(dataDefaults({ kind: 'documents' })).toMatchObject({
      kind: 'decoder-only',
      steps: 2000,
      seqLen: 64,
      lr: 0,
      overrides: {},
      ownTokenizer: false,
    });
    expect(dataDefaults({ kind: 'pairs' })).toMatchObject({
      kind: 'encoder-decoder',
      steps: 2000,
      seqLen: 64,
      lr: 0,
      overrides: {},
    });
    for (const task of TASK_NAMES) {
      const d = dataDefaults({ kind: 'task', task });
      expect(d.kind, task).toBe(TASK_MODEL_KINDS[task]);
      expect(d.overrides, task).toMatchObject({ dropout: 0, labelSmoothing: 0 });
      expect([d.steps, d.seqLen, d.lr], task).toEqual([
        TASK_RUNS[task].steps,
        TASK_RUNS[task].seqLen,
        TASK_RUNS[task].lr ?? 3e-3,
      ]);
      expect(d.ownTokenizer, task).toBe(TASK_MODEL_KINDS[task] === 'decoder-only');
    }
  });

  it("is what taskInfo reports as the task's default run", () => {
    for (const task of TASK_NAMES) {
      const {
        task: _t,
        description: _d,
        srcLength: _s,
        maxTgtLength: _m,
        trainPairs: _p,
        valPairs: _v,
        ...run
      } = taskInfo(task);
      expect(run, task).toEqual(TASK_RUNS[task]);
    }
  });
});

describe('trainSpecOf', () => {
  it("makes the induction task's run: context 32, 3000 steps, dFF 4, untied, sinusoidal, no dropout or label smoothing, decoder-only", () => {
    const spec = trainSpecOf({ kind: 'task', task: 'induction' });
    expect(trainSpec.check(spec, 'spec')).toEqual(spec);
    expect(spec.model).toEqual({
      kind: 'decoder-only',
      preset: 'tiny',
      overrides: { dropout: 0, labelSmoothing: 0, dFF: 4, tieEmbeddings: false, positional: 'sinusoidal' },
    });
    // Its phase change takes ~250 steps: validation every 100 steps and a snapshot every 50 show it.
    expect(spec.training).toMatchObject({
      steps: 3000,
      seqLen: 32,
      lr: 3e-3,
      evalEvery: 100,
      checkpointEvery: 600,
      snapshotEvery: 50,
    });
    const config = resolveConfig(spec, 286);
    expect([
      config.kind,
      config.dFF,
      config.positional,
      config.tieEmbeddings,
      config.dropout,
      config.maxLen >= 32,
    ]).toEqual(['decoder-only', 4, 'sinusoidal', false, 0, true]);
  });

  it("lets the user's choices win over the data's, field by field", () => {
    const spec = trainSpecOf(
      { kind: 'task', task: 'induction' },
      { overrides: { dFF: 16, dropout: 0.1 }, steps: 40, seqLen: 12, lr: 0.01, evalEvery: 0 },
    );
    expect(spec.model.overrides).toEqual({
      dropout: 0.1,
      labelSmoothing: 0,
      dFF: 16,
      tieEmbeddings: false,
      positional: 'sinusoidal',
    });
    expect(spec.training).toMatchObject({
      steps: 40,
      seqLen: 12,
      lr: 0.01,
      evalEvery: 0,
      checkpointEvery: 8,
      snapshotEvery: 1,
    });
  });

  it('keeps the character tokenizer of a task that brings its own letters, and the chosen one elsewhere', () => {
    expect(trainSpecOf({ kind: 'task', task: 'induction' }, { tokenizer: 'bpe', vocabSize: 500 }).tokenizer).toEqual({
      type: 'char',
      vocabSize: 1000,
    });
    expect(trainSpecOf({ kind: 'task', task: 'reverse' }, { tokenizer: 'bpe', vocabSize: 500 }).tokenizer).toEqual({
      type: 'bpe',
      vocabSize: 500,
    });
  });
});

describe('one default run for the CLI, the bench and the extension', () => {
  it.each(TASK_NAMES)('--task %s and the settings that choose it make the same spec', async (task: TaskName) => {
    const kind = TASK_MODEL_KINDS[task];
    const cli = await cliSpec(['--task', task]);
    const ext = extSpec({
      'attentionLab.data.source': 'task',
      'attentionLab.data.task': task,
      'attentionLab.model.kind': kind,
    });
    expect(ext).toEqual(cli);
    expect(cli).toEqual(trainSpecOf({ kind: 'task', task }));
    // The bench trains the same run, without evaluation or periodic checkpoints.
    expect(benchTaskSpec(task)).toEqual({ ...cli, training: { ...cli.training, evalEvery: 0, checkpointEvery: 0 } });
  });

  it('makes the same spec for the same explicit choices', async () => {
    const cli = await cliSpec([
      '--task',
      'induction',
      '--steps',
      '60',
      '--seq',
      '16',
      '--set',
      'dFF=8',
      '--seed',
      '3',
      '--lr',
      '0.002',
      '--batch',
      '8',
      '--snapshot-every',
      '5',
    ]);
    const ext = extSpec({
      'attentionLab.data.source': 'task',
      'attentionLab.data.task': 'induction',
      'attentionLab.model.kind': 'decoder-only',
      'attentionLab.training.steps': 60,
      'attentionLab.training.seqLen': 16,
      'attentionLab.model.overrides': { dFF: '8' },
      'attentionLab.training.seed': 3,
      'attentionLab.training.learningRate': 0.002,
      'attentionLab.training.batchSize': 8,
      'attentionLab.training.snapshotEvery': 5,
    });
    expect(ext).toEqual(cli);
    expect(cli.model.overrides).toMatchObject({ dFF: '8', positional: 'sinusoidal' });
    expect(cli.training).toMatchObject({
      steps: 60,
      seqLen: 16,
      seed: 3,
      lr: 0.002,
      batchSize: 8,
      snapshotEvery: 5,
      evalEvery: 2,
    });
  });

  it('leaves documents at the general defaults, as before', () => {
    const spec = specFromSettings(DEFAULT_SETTINGS, { kind: 'documents', files: [], root: '' });
    expect(spec.model).toEqual({ kind: 'decoder-only', preset: 'tiny', overrides: {} });
    expect(spec.training).toMatchObject({
      steps: 2000,
      seqLen: 64,
      lr: 0,
      evalEvery: 200,
      snapshotEvery: 100,
      checkpointEvery: 400,
    });
  });

  it('refuses a BPE tokenizer for the induction task on the command line', async () => {
    await expect(cliSpec(['--task', 'induction', '--tokenizer', 'bpe'])).rejects.toThrow(/own character tokenizer/);
  });
});
