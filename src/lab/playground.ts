/**
 * One decode for the dashboard's playground: tokenizes the input, runs greedy, beam or
 * sampling decoding with the key/value cache, streams tokens as they are chosen, and
 * returns the text, token strings, log-probabilities and attention of every generated
 * token.
 */

import { beamSearch } from '../engine/decode/beam';
import { greedyDecode } from '../engine/decode/greedy';
import { sampleDecode } from '../engine/decode/sample';
import type { DecodeResult } from '../engine/decode/stepperContract';
import { EngineError } from '../engine/errors';
import { createStepper } from '../engine/models/stepper';
import { Rng } from '../engine/rng';
import { BOS, EOS } from '../engine/tokenizers/special';
import type { DecodeOutput, DecodeParams } from '../protocol/model';
import type { OpenRun } from './openRun';

/** Decodes `params.input` with the run's model; `onToken` streams greedy/sampled tokens. */
export function playgroundDecode(r: OpenRun, params: DecodeParams, onToken?: (token: string, logprob: number) => void): DecodeOutput {
  const encdec = r.model.config.kind === 'encoder-decoder';
  let prompt: Int32Array;
  let src: Int32Array | undefined;
  if (encdec) {
    src = r.tok.encode(params.input, { eos: true });
    if (src.length > r.model.maxSrcLen) throw new EngineError('input/invalid', `Source of ${src.length} tokens exceeds the context of ${r.model.maxSrcLen}; shorten it.`);
    prompt = Int32Array.of(BOS);
  } else {
    prompt = r.tok.encode(params.input, { bos: true });
    if (prompt.length > r.model.config.maxLen) throw new EngineError('input/invalid', `Prompt of ${prompt.length} tokens exceeds the context of ${r.model.config.maxLen}; shorten it.`);
  }
  const beam = params.strategy === 'beam' ? params.beam : 1;
  const stepper = createStepper(r.model, r.model.backendOrThrow(), { maxRows: beam, ...(src ? { src } : {}) });
  const common = { maxTokens: params.maxTokens, eos: EOS, captureAttention: true };
  const stream = onToken ? (id: number, lp: number): void => onToken(r.tok.tokenText(id), lp) : undefined;
  let results: DecodeResult[];
  if (params.strategy === 'greedy') results = [greedyDecode(stepper, prompt, { ...common, ...(stream ? { onToken: stream } : {}) })];
  else if (params.strategy === 'beam') results = beamSearch(stepper, prompt, { ...common, beamSize: beam, lengthPenalty: params.lengthPenalty });
  else {
    results = [sampleDecode(stepper, prompt, { ...common, temperature: params.temperature, topK: params.topK, topP: params.topP, rng: new Rng(params.seed), ...(stream ? { onToken: stream } : {}) })];
  }
  const textOf = (d: DecodeResult): string => r.tok.decode(d.tokens.filter((t) => t !== EOS), { skipSpecial: true });
  const best = results[0] as DecodeResult;
  const a = best.attention;
  return {
    text: textOf(best),
    promptTokens: Array.from(encdec ? (src as Int32Array) : prompt, (id) => r.tok.tokenText(id)),
    tokens: best.tokens.map((t) => r.tok.tokenText(t)),
    ids: best.tokens,
    logprobs: best.logprobs,
    score: best.score,
    attention: a ? { queryStart: a.queryStart, queries: a.queries, selfKeys: a.selfKeys, sourceLength: a.sourceLength, nHeads: a.nHeads, self: a.self, cross: a.cross } : null,
    beams: params.strategy === 'beam' ? results.map((d) => ({ text: textOf(d), score: d.score })) : [],
  };
}
