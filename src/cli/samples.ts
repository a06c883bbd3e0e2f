/**
 * A few decoded samples of a trained run, shown when training ends: for pairs, held-out
 * sources with the model's greedy output and whether it matches; for documents, a
 * continuation of the start of a held-out document.
 */

import { greedyDecode } from '../engine/decode/greedy';
import { createStepper } from '../engine/models/stepper';
import { EOS } from '../engine/tokenizers/special';
import { translate } from '../lab/evaluate';
import type { OpenRun } from '../lab/openRun';
import { loadRunText } from '../lab/prepare';

/** One sample line. */
export type Sample =
  | { readonly kind: 'pair'; readonly input: string; readonly output: string; readonly expected: string; readonly ok: boolean }
  | { readonly kind: 'text'; readonly input: string; readonly output: string };

/** Up to `n` samples from the run's validation data. */
export async function sampleRun(r: OpenRun, n: number): Promise<Sample[]> {
  const text = await loadRunText(r.run.spec);
  if (text.kind === 'pairs') {
    return text.valPairs.slice(0, n).map((p) => {
      const output = translate(r.model, r.tok, r.tok.encode(p.src, { eos: true }).slice(0, r.model.maxSrcLen));
      return { kind: 'pair', input: p.src, output, expected: p.tgt, ok: output === p.tgt };
    });
  }
  const docs = (text.valDocs.length ? text.valDocs : text.trainDocs).slice(0, n);
  return docs.map((d) => {
    const input = Array.from(d).slice(0, 24).join('');
    const prompt = r.tok.encode(input, { bos: true }).slice(0, Math.max(1, r.model.config.maxLen - 1));
    const stepper = createStepper(r.model, r.model.backendOrThrow(), { maxRows: 1 });
    const out = greedyDecode(stepper, prompt, { maxTokens: Math.max(1, Math.min(80, r.model.config.maxLen - prompt.length)), eos: EOS });
    return { kind: 'text', input, output: r.tok.decode(out.tokens, { skipSpecial: true }) };
  });
}
