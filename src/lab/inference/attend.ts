/**
 * Attention of a run's model on a text (the editor's "Show Attention for Selection"): one
 * forward pass without dropout, then every layer's attention probabilities
 * softmax(QKᵀ/√d_k) ("Attention Is All You Need" §3.2.1) and the masks that were applied,
 * taken by the same code as a training snapshot (lab/training/snapshots.ts), so the dashboard draws it
 * with the same views. Decoder-only: BOS + the text. Encoder-decoder: the text is the
 * source, and the decoder side is the model's own greedy output for it (teacher-forced
 * back through).
 *
 * Texts longer than the context are cut to fit (BOS + the first L − 1 tokens; a source keeps
 * its first L − 1 tokens and EOS), and the snapshot's `truncation` says so ("Showing the
 * first 63 of 97 tokens — the model's context is 64.").
 *
 * The snapshot carries every head's scores, as a training snapshot does (lab/training/headScores.ts):
 * previous-token, first-token, diagonal, entropy and the cross-attention alignment measured on
 * this text, induction on the run's diagnostic sequence (random tokens repeated twice — a
 * text has no known repeat to measure it on). `source: 'selection'` tells the dashboard so.
 * Leaves out: beam or sampled targets.
 */

import { EngineError } from '../../engine/errors';
import type { Batch } from '../../engine/models/inputs';
import { PAD } from '../../engine/tokenizers/special';
import type { AttentionSnapshot } from '../../protocol/model';
import type { OpenRun } from '../runs/openRun';
import { scoredSnapshot } from '../training/snapshots';
import { greedyTarget } from './decode';

/** The attention snapshot of `text` (see the file comment for what each model kind shows). */
export function attendText(r: OpenRun, text: string): AttentionSnapshot {
  if (text.length === 0) throw new EngineError('input/invalid', 'The text is empty; select some text to see its attention.');
  const { batch, truncation } = attentionBatch(r, text);
  const snapshot: AttentionSnapshot = { ...scoredSnapshot(r.model, batch, r.tok, r.step, r.run.spec.training.seed), source: 'selection' };
  return truncation === null ? snapshot : { ...snapshot, truncation };
}

/** The sentence saying a text of `total` tokens was cut to its first `shown` (context `L`). */
function truncationNote(shown: number, total: number, L: number, what: string): string {
  return `Showing the first ${shown} of ${total} ${what} tokens — the model's context is ${L}.`;
}

/** The one-sequence batch whose attention is shown for `text`, and the note when the text was cut. */
function attentionBatch(r: OpenRun, text: string): { batch: Batch; truncation: string | null } {
  const { model, tok } = r;
  const { bos, eos } = tok.specialIds; // GPT-2's <|endoftext|> in its vocabulary
  if (model.config.kind === 'encoder-decoder') {
    const full = tok.encode(text, { eos: true });
    const cut = full.length > model.maxSrcLen;
    const src = cut ? Int32Array.of(...full.subarray(0, model.maxSrcLen - 1), eos) : full;
    const input = Int32Array.of(bos, ...greedyTarget(model, tok.specialIds, src).slice(0, model.maxLen - 1));
    const targets = Int32Array.of(...input.subarray(1), eos);
    const truncation = cut ? truncationNote(model.maxSrcLen - 1, full.length - 1, model.maxSrcLen, 'source') : null;
    return { batch: { B: 1, T: input.length, input, targets, S: src.length, src }, truncation };
  }
  const body = tok.encode(text);
  const input = Int32Array.of(bos, ...body.subarray(0, model.maxLen - 1));
  const targets = Int32Array.of(...input.subarray(1), PAD);
  const truncation = body.length > model.maxLen - 1 ? truncationNote(model.maxLen - 1, body.length, model.maxLen, 'text') : null;
  return { batch: { B: 1, T: input.length, input, targets }, truncation };
}
