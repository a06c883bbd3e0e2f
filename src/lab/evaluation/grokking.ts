/**
 * The modular-addition task's progress measures at one step: the model's answer on every pair
 * (a, b) of Z_p, from which the train and test loss and accuracy, and the restricted and
 * excluded loss along the key frequencies; the embedding's Fourier spectrum, from which the key
 * frequencies (src/engine/analysis/fourier.ts has the definitions). One pass of p² pairs in
 * batches of the model's planned rows (four forwards of the default 3831 for p = 113), at the
 * run's validation cadence.
 *
 * The key frequencies are this step's (the spectrum's): the paper takes the final model's for
 * every checkpoint, which a live run does not know yet.
 *
 * Leaves out: the data (data/modularTask.ts) and where the numbers go (training/session.ts logs
 * them with the validation).
 */

import { embeddingSpectrum, fourierLosses, keyFrequencies, lossAndAccuracy } from '../../engine/analysis/fourier';
import type { Transformer } from '../../engine/models/transformer';
import type { GrokkingMetrics } from '../../protocol/data';
import type { ModularTask } from '../data/dataset';
import { modularBatch } from '../data/modularTask';

/** Logits [p², V] of the answer position ('=') for every pair a·p + b, and each pair's answer id. */
export function answerLogits(model: Transformer, task: ModularTask): { logits: Float32Array; targets: Int32Array } {
  const { p } = task;
  const N = p * p;
  const V = model.config.vocabSize;
  const logits = new Float32Array(N * V);
  const targets = new Int32Array(N);
  const rows = Math.max(1, model.maxBatch);
  const all = Int32Array.from({ length: N }, (_, i) => i);
  for (let start = 0; start < N; start += rows) {
    const batch = modularBatch(all.subarray(start, Math.min(N, start + rows)), p, task.ids);
    model.forward(batch, { train: false, labelSmoothing: 0 });
    const out = model.logits(); // [B, 3, V]
    for (let b = 0; b < batch.B; b++) {
      logits.set(out.subarray((b * 3 + 2) * V, (b * 3 + 3) * V), (start + b) * V);
      targets[start + b] = batch.targets[b * 3 + 2] as number;
    }
  }
  return { logits, targets };
}

/** The progress measures of `model` on `task` (see the file comment). */
export function grokkingMetrics(model: Transformer, task: ModularTask): GrokkingMetrics {
  const { p } = task;
  const V = model.config.vocabSize;
  const { logits, targets } = answerLogits(model, task);
  const isTrain = new Uint8Array(p * p);
  for (const i of task.train) isTrain[i] = 1;
  const isTest = isTrain.map((v) => 1 - v);
  const train = lossAndAccuracy(logits, V, targets, isTrain);
  const test = lossAndAccuracy(logits, V, targets, isTest);
  const wte = model.param('transformer.wte.weight');
  const spectrum = embeddingSpectrum(wte.data, model.config.dModel, task.ids.numbers);
  const keyFreqs = keyFrequencies(spectrum);
  const { restrictedLoss, excludedLoss } = fourierLosses(logits, p, V, targets, isTrain, keyFreqs);
  return {
    trainLoss: train.loss,
    trainAcc: train.acc,
    testLoss: test.loss,
    testAcc: test.acc,
    spectrum,
    keyFreqs,
    restrictedLoss,
    excludedLoss,
  };
}
