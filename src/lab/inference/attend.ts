/**
 * Attention of a run's model on a text (the editor's "Show Attention for Selection"): one
 * forward pass without dropout, then every layer's attention probabilities
 * softmax(QKᵀ/√d_k) ("Attention Is All You Need" §3.2.1) and the masks that were applied,
 * taken by the same code as a training snapshot (snapshots.ts), so the dashboard draws it
 * with the same views. Decoder-only: BOS + the text. Encoder-decoder: the text is the
 * source, and the decoder side is the model's own greedy output for it (teacher-forced
 * back through).
 *
 * Leaves out: texts longer than the context, which are cut to fit (BOS + the first L − 1
 * tokens; a source keeps its first L − 1 tokens and EOS). The snapshot has no field that
 * says so; its token lists show where the cut fell. Beam or sampled targets are left out too.
 */

import { EngineError } from '../../engine/errors';
import type { Batch } from '../../engine/models/transformer';
import { BOS, EOS, PAD } from '../../engine/tokenizers/special';
import type { AttentionSnapshot } from '../../protocol/model';
import type { OpenRun } from '../openRun';
import { snapshotOf } from '../snapshots';
import { greedyTarget } from './decode';

/** The attention snapshot of `text` (see the file comment for what each model kind shows). */
export function attendText(r: OpenRun, text: string): AttentionSnapshot {
  if (text.length === 0) throw new EngineError('input/invalid', 'The text is empty; select some text to see its attention.');
  return snapshotOf(r.model, attentionBatch(r, text), r.tok, r.step);
}

/** The one-sequence batch whose attention is shown for `text`. */
function attentionBatch(r: OpenRun, text: string): Batch {
  const { model, tok } = r;
  if (model.config.kind === 'encoder-decoder') {
    const full = tok.encode(text, { eos: true });
    const src = full.length > model.maxSrcLen ? Int32Array.of(...full.subarray(0, model.maxSrcLen - 1), EOS) : full;
    const input = Int32Array.of(BOS, ...greedyTarget(model, src).slice(0, model.maxLen - 1));
    const targets = Int32Array.of(...input.subarray(1), EOS);
    return { B: 1, T: input.length, input, targets, S: src.length, src };
  }
  const body = tok.encode(text);
  const input = Int32Array.of(BOS, ...body.subarray(0, model.maxLen - 1));
  const targets = Int32Array.of(...input.subarray(1), PAD);
  return { B: 1, T: input.length, input, targets };
}
