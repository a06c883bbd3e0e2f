/**
 * A few decoded samples of a trained run, shown when training ends: for pairs, held-out
 * sources with the model's greedy output and whether it matches (validation's greedy
 * target); for documents, a greedy continuation of the beginning of held-out text
 * (recorded in run.json when the run began) by the one decode pipeline, so it starts at
 * the run's BOS and stops at the run's EOS, whatever vocabulary the run has.
 *
 * Leaves out: decoding itself (src/lab/inference/decode.ts) and printing (train.ts).
 */

import { decodeText, greedyTarget } from '../lab/inference/decode';
import type { OpenRun } from '../lab/inference/openRun';
import { NODE_FS } from '../lab/files/fs.node';
import { loadPairsText, loadRunData } from '../lab/data/runData';

/** One sample line. */
export type Sample =
  | {
      readonly kind: 'pair';
      readonly input: string;
      readonly output: string;
      readonly expected: string;
      readonly ok: boolean;
    }
  | { readonly kind: 'text'; readonly input: string; readonly output: string };

/** Characters of held-out text a continuation starts from. */
const PROMPT_CHARS = 24;
/** Most tokens a continuation generates. */
const MAX_GENERATED = 80;

/** Up to `n` samples from the run's validation data. */
export async function sampleRun(r: OpenRun, n: number): Promise<Sample[]> {
  const spec = r.run.spec;
  if (spec.model.kind === 'encoder-decoder') {
    const text = await loadPairsText(NODE_FS, spec);
    return text.valPairs.slice(0, n).map((p) => {
      const output = r.tok.decode(
        greedyTarget(r.model, r.tok.specialIds, r.tok.encode(p.src, { eos: true }).slice(0, r.model.maxSrcLen)),
        { skipSpecial: true },
      );
      return { kind: 'pair', input: p.src, output, expected: p.tgt, ok: output === p.tgt };
    });
  }
  // Runs record a few beginnings of held-out text; older ones have them read again.
  let prompts = r.run.data.prompts;
  if (!prompts) {
    const data = await loadRunData(NODE_FS, spec, r.tok, { need: 'validation' });
    prompts = data.kind === 'documents' ? data.docs.prompts : [];
  }
  return prompts.slice(0, n).map((p) => continuation(r, p));
}

/**
 * The greedy continuation of the first PROMPT_CHARS characters of `text` (fewer when BOS and
 * their tokens would leave no position of the context to generate into), up to
 * MAX_GENERATED tokens within the context.
 */
function continuation(r: OpenRun, text: string): Sample {
  const L = r.model.config.maxLen;
  const promptLength = (chars: readonly string[]): number => r.tok.encode(chars.join(''), { bos: true }).length;
  let chars = Array.from(text).slice(0, PROMPT_CHARS);
  while (chars.length > 1 && promptLength(chars) > L - 1) chars = chars.slice(0, -1);
  const input = chars.join('');
  const maxTokens = Math.max(1, Math.min(MAX_GENERATED, L - promptLength(chars)));
  const { output } = decodeText(r, {
    input,
    strategy: 'greedy',
    beam: 1,
    lengthPenalty: 0.6,
    temperature: 1,
    topK: 0,
    topP: 1,
    maxTokens,
    seed: 1,
  });
  return { kind: 'text', input, output: output.text };
}
