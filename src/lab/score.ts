/**
 * Teacher-forced scoring: log p(token | everything before it) for each token of a sequence
 * from one forward pass (conditioned on a source for an encoder-decoder). Shared by the CLI's
 * `score` and the extension's "Score Selection"; callers check lengths against the context.
 */

import type { Batch } from '../engine/models/transformer';
import type { OpenRun } from './openRun';

/** log softmax(logits[row])[id], computed stably (subtract the row max before exp). */
export function logSoftmaxAt(logits: ArrayLike<number>, row: number, V: number, id: number): number {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[row * V + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[row * V + v] as number) - max);
  return (logits[row * V + id] as number) - max - Math.log(sum);
}

/** log p of each target of one window: inputs ids[s..e), targets ids[s+1..e+1). */
export function windowLogprobs(r: OpenRun, ids: Int32Array, s: number, e: number, src?: Int32Array): number[] {
  const T = e - s;
  if (T < 1) return [];
  const batch: Batch = { B: 1, T, input: ids.slice(s, e), targets: ids.slice(s + 1, e + 1), ...(src ? { S: src.length, src } : {}) };
  r.model.forward(batch, { train: false, labelSmoothing: 0 });
  const logits = r.model.logits();
  const V = r.model.config.vocabSize;
  return Array.from({ length: T }, (_, t) => logSoftmaxAt(logits, t, V, ids[s + t + 1] as number));
}
