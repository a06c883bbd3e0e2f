/**
 * Taking an attention snapshot: one forward pass of the probe sample (or of a text the user
 * picks, inference/attend.ts) without dropout, every layer's attention maps and the masks the
 * engine used, with the tokens on both axes, and every head's scores — what training records
 * so the dashboard's timeline can show a head learning.
 *
 * Leaves out: the snapshot files in a run folder (runs/snapshotFiles.ts).
 */

import type { Batch } from '../../engine/models/inputs';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import type { AttentionSnapshot } from '../../protocol/model';
import type { Dataset } from '../data/dataset';
import { diagnosticRows, forwardAttend, measureInduction, scoreHeads } from './headScores';

/**
 * Runs the probe sample and copies out its attention and masks, then (unless `headScores` is
 * false — only the benchmark turns them off, to measure what they cost) runs the run's
 * diagnostic sequence (seeded by `seed`) and scores every head (headScores.ts).
 */
export function takeSnapshot(
  model: Transformer,
  dataset: Dataset,
  tok: Tokenizer,
  step: number,
  seed: number,
  headScores = true,
): AttentionSnapshot {
  const batch = dataset.probe();
  return headScores ? scoredSnapshot(model, batch, tok, step, seed) : snapshotOf(model, batch, tok, step);
}

/**
 * The snapshot of `batch` (see {@link snapshotOf}) with every head's scores: the positional
 * scores and cross-attention alignment measured on `batch` itself, induction on the run's
 * diagnostic sequence (seeded by `seed`), which is the same whatever `batch` is.
 */
export function scoredSnapshot(
  model: Transformer,
  batch: Batch,
  tok: Tokenizer,
  step: number,
  seed: number,
): AttentionSnapshot {
  const snap = snapshotOf(model, batch, tok, step);
  // One sequence per forward: the model may be planned for a batch of one (inference).
  const rows = diagnosticRows(model, tok.specialIds, seed);
  const induction = rows ? measureInduction(rows, forwardAttend(model)) : null;
  return { ...snap, headScores: scoreHeads({ batch, maps: snap.maps }, induction, tok.specialIds) };
}

/**
 * One forward pass of `batch` without dropout, and the attention and masks of its first
 * sequence, with the tokens on both axes: a training snapshot, or the attention of a text
 * the user picked (inference/attend.ts).
 */
export function snapshotOf(model: Transformer, batch: Batch, tok: Tokenizer, step: number): AttentionSnapshot {
  model.forward(batch, { train: false, labelSmoothing: 0, loss: false }); // the maps need no logits
  const cap = model.captureAttention(0);
  const text = (ids: Int32Array | undefined, n: number): string[] => (ids ? tokenLabels(tok, ids.subarray(0, n)) : []);
  return {
    step,
    srcTokens: text(batch.src, batch.S ?? 0),
    tgtTokens: text(batch.input, batch.T),
    maps: cap.maps.map((m) => ({ stack: m.stack, layer: m.layer, shape: m.shape, data: m.data, kvHeads: m.kvHeads })),
    masks: cap.masks.map((m) => ({ name: m.name, shape: m.shape, data: m.data })),
  };
}
