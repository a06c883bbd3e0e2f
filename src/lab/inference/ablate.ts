/**
 * Head ablation (Michel et al. 2019, "Are Sixteen Heads Really Better than One?"): switch
 * attention heads off — their output zeroed before the output projection W_o — and see
 * how the model's loss and next-token prediction change. Head importance is the change in
 * validation loss (mean over the run's validation batches, without label smoothing, as
 * `attention-lab eval` computes it) when that one head is off: positive = the model needs it.
 *
 * The playground's comparison (`compareHeadsOff`) runs on a device too (`compareHeadsOffAsync`):
 * the logits are read back once per forward, and the loss, which a device's cross-entropy keeps
 * there, is computed from them on the host (the same mean of −log p over the counted targets).
 *
 * Leaves out: ablating several heads at once in the importance table (each head is measured
 * alone; `predictWithHeadsOff` takes any set), gradient-based importance estimates, and
 * masks between 0 and 1.
 */

import type { LabFs } from '../files/labFs';
import type { Backend, FloatArray } from '../../engine/backend';
import type { HeadRef, AttentionStack } from '../../engine/models/heads';
import { allHeads } from '../../engine/models/heads';
import type { Batch } from '../../engine/models/inputs';
import type { Transformer } from '../../engine/models/transformer';
import type { OpenRun } from './openRun';
import { openRun } from './openRun';
import { buildDataset, loadRunData } from '../data/runData';
import { readTokenizer } from '../runs/tokenizerFile';
import { readRunJson } from '../runs/runFolder';
import type { AblationOutputData, PredictionData } from '../../protocol/analysis';
import type { LensInput, TopToken } from './lens';
import { MAX_TOP_K, fittedBatchSteps, inputBatch, probsAt, topIds, topTokens } from './lens';
import { logSoftmaxAt } from './score';
import type { ReadSteps } from '../../engine/hostReads';
import { runReads, runReadsAsync } from '../../engine/hostReads';
import { nextTokenLabel, tokenLabels } from '../../engine/tokenizers/tokenDisplay';

/** One head's importance: loss with it off − loss with every head on. */
export interface HeadImportance {
  readonly stack: AttentionStack;
  /** 0-based, as the engine names heads. */
  readonly layer: number;
  readonly head: number;
  readonly deltaLoss: number;
}

/** The importance of every head, in allHeads order. */
export interface HeadImportanceResult {
  readonly baseLoss: number;
  readonly heads: readonly HeadImportance[];
}

/** Token-weighted mean loss (nats, no label smoothing) of `batches` with the heads of `off` switched off. */
export function lossWithHeadsOff(model: Transformer, batches: readonly Batch[], off: readonly HeadRef[]): number {
  let sum = 0;
  let count = 0;
  for (const b of batches) {
    const r = model.forward(b, { train: false, labelSmoothing: 0, ablate: off });
    sum += r.loss * r.tokens;
    count += r.tokens;
  }
  return count ? sum / count : Number.NaN;
}

/** Δloss of each head alone switched off on `batches`; `onHead` runs after each (it may throw to stop). */
export function headImportance(
  model: Transformer,
  batches: readonly Batch[],
  onHead?: (done: number, total: number) => void,
): HeadImportanceResult {
  const baseLoss = lossWithHeadsOff(model, batches, []);
  const all = allHeads(model.config);
  const heads = all.map((h, i) => {
    const deltaLoss = lossWithHeadsOff(model, batches, [h]) - baseLoss;
    onHead?.(i + 1, all.length);
    return { ...h, deltaLoss };
  });
  return { baseLoss, heads };
}

/** A run opened for its validation batches (the model planned for their batch size). */
export async function openRunWithValidation(
  fs: LabFs,
  runDir: string,
  backend: Backend,
): Promise<{ run: OpenRun; batches: readonly Batch[] }> {
  const json = await readRunJson(fs, runDir);
  const tok = await readTokenizer(fs, runDir);
  const data = await loadRunData(fs, json.spec, tok, { need: 'validation' });
  const { dataset } = buildDataset(json.spec, data, json.config.maxLen);
  return { run: await openRun(fs, runDir, backend, dataset.maxBatch), batches: dataset.valBatches() };
}

/** What the model predicts for an input with some heads off. */
export interface AblatedPrediction {
  /** Mean loss of the input's own next tokens (teacher-forced; an encoder-decoder's target includes EOS). */
  readonly loss: number;
  /** The top-k next tokens after the last position. */
  readonly next: readonly TopToken[];
}

/** Next-token probabilities and loss of `input` (as the lens reads it) with the heads of `off` switched off. */
export function predictWithHeadsOff(
  r: OpenRun,
  input: LensInput,
  off: readonly HeadRef[],
  topK = 5,
): AblatedPrediction {
  const k = Math.max(1, Math.min(MAX_TOP_K, Math.floor(topK)));
  const batch = inputBatch(r, input);
  const { loss } = r.model.forward(batch, { train: false, labelSmoothing: 0, ablate: off });
  return { loss, next: topTokens(r, r.model.logitsAt([batch.T - 1]), 0, k, batch.input.subarray(0, batch.T)) };
}

/**
 * The prediction of `batch` (one sequence) with the heads of `off` switched off, and the full next-token distribution.
 */
function* predictBatch(
  r: OpenRun,
  batch: Batch,
  off: readonly HeadRef[],
  k: number,
): ReadSteps<{ prediction: PredictionData; probs: Float64Array; top: number[] }> {
  const model = r.model;
  // A device keeps the forward's loss there: it is taken on the host instead, from the logits read back a chunk of
  // positions at a time (ModelShape.logitRows), so [T, V] is never read back whole either.
  const onDevice = model.backendOrThrow().download !== undefined;
  const forward = model.forward(batch, { train: false, labelSmoothing: 0, ablate: off, loss: !onDevice });
  let { loss, tokens } = forward;
  let last: FloatArray; // the last position's logits
  if (onDevice) {
    const V = model.config.vocabSize;
    let sum = 0;
    tokens = 0;
    let logits: FloatArray | null = null;
    let n = 0;
    for (let t0 = 0; t0 < batch.T; t0 += model.logitRows) {
      n = Math.min(model.logitRows, batch.T - t0);
      logits = model.logitsAt(Array.from({ length: n }, (_, i) => t0 + i));
      yield logits;
      const part = hostLoss(r, logits, batch.targets.subarray(t0, t0 + n));
      sum += part.sum;
      tokens += part.count;
    }
    loss = tokens ? sum / tokens : 0;
    last = (logits as FloatArray).subarray((n - 1) * V, n * V);
  } else last = model.logitsAt([batch.T - 1]);
  const probs = probsAt(r, last, 0);
  const top = topIds(probs, k);
  return {
    prediction: {
      loss,
      scored: tokens,
      next: top.map((id) => ({
        token: nextTokenLabel(r.tok, batch.input.subarray(0, batch.T), id),
        prob: probs[id] as number,
      })),
    },
    probs,
    top,
  };
}

/**
 * The playground's ablation: `input` (as the lens reads it; `fit` cuts a long one to the
 * context instead of refusing it) with every head on and with the heads of `off` switched
 * off — next-token top-k and loss, side by side. Both come from the same forward code, and
 * with `off` empty the two are the same numbers bit for bit.
 */
export function compareHeadsOff(
  r: OpenRun,
  input: LensInput,
  off: readonly HeadRef[],
  opts: { readonly topK: number; readonly fit?: boolean },
): AblationOutputData {
  return runReads(r.model.backendOrThrow(), compareSteps(r, input, off, opts));
}

/** {@link compareHeadsOff} on any backend (see the file comment). */
export function compareHeadsOffAsync(
  r: OpenRun,
  input: LensInput,
  off: readonly HeadRef[],
  opts: { readonly topK: number; readonly fit?: boolean },
): Promise<AblationOutputData> {
  return runReadsAsync(r.model.backendOrThrow(), compareSteps(r, input, off, opts));
}

/** The summed −log p of `targets`' counted ids (not the padding id) from their rows of logits, and their count. */
function hostLoss(r: OpenRun, logits: ArrayLike<number>, targets: Int32Array): { sum: number; count: number } {
  const V = r.model.config.vocabSize;
  let sum = 0;
  let count = 0;
  for (let t = 0; t < targets.length; t++) {
    const target = targets[t] as number;
    if (target === r.model.padId) continue;
    sum -= logSoftmaxAt(logits, t, V, target);
    count++;
  }
  return { sum, count };
}

function* compareSteps(
  r: OpenRun,
  input: LensInput,
  off: readonly HeadRef[],
  opts: { readonly topK: number; readonly fit?: boolean },
): ReadSteps<AblationOutputData> {
  const k = Math.max(1, Math.min(MAX_TOP_K, Math.floor(opts.topK)));
  const { batch, truncation } = yield* fittedBatchSteps(r, input, opts.fit === true);
  const ablated = yield* predictBatch(r, batch, off, k); // first: a head that does not exist is refused before any work
  const base = yield* predictBatch(r, batch, [], k);
  const ids = [...new Set([...base.top, ...ablated.top])];
  ids.sort(
    (a, b) =>
      (base.probs[b] as number) - (base.probs[a] as number) ||
      (ablated.probs[b] as number) - (ablated.probs[a] as number) ||
      a - b,
  );
  return {
    tokens: tokenLabels(r.tok, batch.input),
    off: off.map(({ stack, layer, head }) => ({ stack, layer, head })),
    base: base.prediction,
    ablated: ablated.prediction,
    compare: ids.map((id) => ({
      token: nextTokenLabel(r.tok, batch.input, id),
      base: base.probs[id] as number,
      ablated: ablated.probs[id] as number,
    })),
    ...(truncation !== null ? { truncation } : {}),
  };
}
