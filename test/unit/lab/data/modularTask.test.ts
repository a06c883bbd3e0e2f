/**
 * The modular-addition task's data (src/lab/data/modularTask.ts): the seeded 30/70 split of the
 * p² pairs (disjoint, complete, reproducible, different for another seed), the "a b =" batches
 * with the answer only at '=', the full training batch every step, and the run's defaults.
 */
import { describe, expect, it } from 'vitest';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { PAD } from '../../../../src/engine/tokenizers/special';
import {
  modularAlphabet,
  modularBatch,
  modularDataset,
  modularIds,
  modularTask,
  splitModularPairs,
} from '../../../../src/lab/data/modularTask';
import { MODULAR_TRAIN_PAIRS, trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { planSegments } from '../../../../src/lab/runs/segments';
import { optimizerConfig, resolveConfig } from '../../../../src/lab/runs/specModel';

describe('modular-addition split', () => {
  it('30% of the 113² pairs train, the rest test: disjoint and together every pair once', () => {
    const { train, test } = splitModularPairs(113, 0.3, 1);
    expect(train.length).toBe(3831);
    expect(train.length + test.length).toBe(113 * 113);
    const seen = new Set([...train, ...test]);
    expect(seen.size).toBe(113 * 113);
    const trainSet = new Set(train);
    expect(test.some((i) => trainSet.has(i))).toBe(false);
  });

  it('is a function of the seed', () => {
    const a = splitModularPairs(113, 0.3, 1);
    expect(splitModularPairs(113, 0.3, 1).train).toEqual(a.train);
    const other = splitModularPairs(113, 0.3, 2).train;
    expect(new Set(other)).not.toEqual(new Set(a.train));
  });

  it('refuses a share that leaves no test pair', () => {
    expect(() => splitModularPairs(5, 1, 1)).toThrow(/between 0 and 1/);
  });
});

describe('modular-addition batches', () => {
  const tok = trainCharTokenizer([modularAlphabet(7)], {});
  const ids = modularIds(tok, 7);

  it('writes "a b =" with the answer (a + b) mod p at the last position only', () => {
    const b = modularBatch([3 * 7 + 5, 6 * 7 + 6], 7, ids);
    expect(b.T).toBe(3);
    expect(Array.from(b.input)).toEqual([
      ids.numbers[3],
      ids.numbers[5],
      ids.equals,
      ids.numbers[6],
      ids.numbers[6],
      ids.equals,
    ]);
    expect(Array.from(b.targets)).toEqual([PAD, PAD, ids.numbers[1], PAD, PAD, ids.numbers[5]]);
    expect(new Set([...ids.numbers, ids.equals]).size).toBe(8);
  });

  it('trains on every training pair each step (full batch) and validates on every test pair', () => {
    const task = modularTask(trainCharTokenizer([modularAlphabet()], {}), 1);
    const d = modularDataset(task, 1, MODULAR_TRAIN_PAIRS);
    expect(d.trainBatch(1).B).toBe(3831);
    expect(d.trainBatch(2)).toBe(d.trainBatch(1));
    expect(d.valBatches().reduce((n, b) => n + b.B, 0)).toBe(113 * 113 - 3831);
    expect(d.modular).toBe(task);
    // Fewer rows: a seeded draw per step.
    const small = modularDataset(task, 1, 64);
    expect(small.trainBatch(1).B).toBe(64);
    expect(small.trainBatch(1).input).toEqual(small.trainBatch(1).input);
    expect(small.trainBatch(2).input).not.toEqual(small.trainBatch(1).input);
  });
});

describe('the task run', () => {
  it('defaults to the published setup: one layer of 128, 4 heads, MLP 512, AdamW 3e-3, decay 1, betas (0.9, 0.98), full batch', () => {
    const spec = trainSpecOf({ kind: 'task', task: 'modular-addition' });
    expect(spec.model.kind).toBe('decoder-only');
    expect(spec.training.batchSize).toBe(3831);
    expect(spec.training.lr).toBe(3e-3);
    expect(spec.training.schedule).toBe('constant');
    const cfg = resolveConfig(spec, 374);
    expect([cfg.nDecoderLayers, cfg.dModel, cfg.nHeads, cfg.dFF, cfg.maxLen]).toEqual([1, 128, 4, 512, 3]);
    expect([cfg.activation, cfg.tieEmbeddings, cfg.dropout]).toEqual(['relu', false, 0]);
    const opt = optimizerConfig(spec, cfg);
    expect(opt.type).toBe('adamw');
    if (opt.type !== 'adamw') return;
    expect([opt.beta1, opt.beta2, opt.weightDecay, opt.clipGradNorm]).toEqual([0.9, 0.98, 1, 0]);
    expect(planSegments(spec)[0]?.schedule).toBe('constant');
  });
});
