/**
 * A few decoded samples of a trained run, shown when training ends: for pairs, held-out
 * sources with the model's greedy output and whether it matches; for documents, a
 * continuation of the beginning of held-out text (recorded in run.json when the run began).
 */

import { greedyDecode } from '../engine/decode/greedy';
import { createStepper } from '../engine/models/stepper';
import { EOS } from '../engine/tokenizers/special';
import { greedyTarget } from '../lab/inference/decode';
import type { OpenRun } from '../lab/runs/openRun';
import { loadPairsText, loadRunData } from '../lab/training/prepare';

/** One sample line. */
export type Sample =
  | { readonly kind: 'pair'; readonly input: string; readonly output: string; readonly expected: string; readonly ok: boolean }
  | { readonly kind: 'text'; readonly input: string; readonly output: string };

/** Up to `n` samples from the run's validation data. */
export async function sampleRun(r: OpenRun, n: number): Promise<Sample[]> {
  const spec = r.run.spec;
  if (spec.model.kind === 'encoder-decoder') {
    const text = await loadPairsText(spec);
    return text.valPairs.slice(0, n).map((p) => {
      const output = r.tok.decode(greedyTarget(r.model, r.tok.encode(p.src, { eos: true }).slice(0, r.model.maxSrcLen)), { skipSpecial: true });
      return { kind: 'pair', input: p.src, output, expected: p.tgt, ok: output === p.tgt };
    });
  }
  // Runs record a few beginnings of held-out text; older ones have them read again.
  let prompts = r.run.data.prompts;
  if (!prompts) {
    const data = await loadRunData(spec, r.tok, { need: 'validation' });
    prompts = data.kind === 'documents' ? data.docs.prompts : [];
  }
  return prompts.slice(0, n).map((p) => {
    const input = Array.from(p).slice(0, 24).join('');
    const prompt = r.tok.encode(input, { bos: true }).slice(0, Math.max(1, r.model.config.maxLen - 1));
    const stepper = createStepper(r.model, r.model.backendOrThrow(), { maxRows: 1 });
    const out = greedyDecode(stepper, prompt, { maxTokens: Math.max(1, Math.min(80, r.model.config.maxLen - prompt.length)), eos: EOS });
    return { kind: 'text', input, output: r.tok.decode(out.tokens, { skipSpecial: true }) };
  });
}
