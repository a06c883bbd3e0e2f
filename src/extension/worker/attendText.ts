/**
 * Attention of a run's model on a text the user selected ("Show Attention for Selection"):
 * one forward pass without dropout, then every layer's attention probabilities
 * softmax(QKᵀ/√d_k) ("Attention Is All You Need" §3.2.1) and the masks that were applied,
 * in the same shape as a training snapshot so the dashboard draws it with the same views.
 * Decoder-only: the text after BOS. Encoder-decoder: the text is the source, and the
 * decoder side is the model's own greedy output for it (teacher-forced back through).
 *
 * Leaves out: texts longer than the context (cut to fit) and beam or sampled targets.
 */

import { greedyDecode } from '../../engine/decode/greedy';
import { EngineError } from '../../engine/errors';
import { createStepper } from '../../engine/models/stepper';
import type { Batch } from '../../engine/models/transformer';
import { BOS, EOS, PAD } from '../../engine/tokenizers/special';
import type { OpenRun } from '../../lab/openRun';
import type { AttentionSnapshot } from '../../protocol/model';

/** The attention snapshot of `text` (see the file comment for what each model kind shows). */
export function attendText(r: OpenRun, text: string): AttentionSnapshot {
  const { model, tok } = r;
  if (text.length === 0) throw new EngineError('input/invalid', 'The text is empty; select some text to see its attention.');
  let batch: Batch;
  if (model.config.kind === 'encoder-decoder') {
    const full = tok.encode(text, { eos: true });
    const src = full.length > model.maxSrcLen ? Int32Array.of(...full.subarray(0, model.maxSrcLen - 1), EOS) : full;
    const stepper = createStepper(model, model.backendOrThrow(), { maxRows: 1, src });
    const out = greedyDecode(stepper, Int32Array.of(BOS), { maxTokens: Math.max(1, model.maxLen - 1), eos: EOS });
    const gen = out.tokens[out.tokens.length - 1] === EOS ? out.tokens.slice(0, -1) : out.tokens;
    const input = Int32Array.of(BOS, ...gen.slice(0, model.maxLen - 1));
    const targets = Int32Array.of(...input.subarray(1), EOS);
    batch = { B: 1, T: input.length, input, targets, S: src.length, src };
  } else {
    const body = tok.encode(text);
    const input = Int32Array.of(BOS, ...body.subarray(0, model.maxLen - 1));
    const targets = Int32Array.of(...input.subarray(1), PAD);
    batch = { B: 1, T: input.length, input, targets };
  }
  model.forward(batch, { train: false, labelSmoothing: 0 });
  const cap = model.captureAttention(0);
  const names = (ids: Int32Array | undefined): string[] => (ids ? Array.from(ids, (id) => tok.tokenText(id)) : []);
  return {
    step: r.step,
    srcTokens: names(batch.src),
    tgtTokens: names(batch.input),
    maps: cap.maps.map((m) => ({ stack: m.stack, kind: m.kind, layer: m.layer, shape: m.shape, data: m.data })),
    masks: cap.masks.map((m) => ({ name: m.name, shape: m.shape, data: m.data })),
  };
}
