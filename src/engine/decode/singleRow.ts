/**
 * The decode loop shared by greedy decoding and sampling: feed the prompt one token at a
 * time (rows = 1), then repeatedly pick a token from the newest logits, report it, and feed
 * it back, until EOS, `maxTokens`, or the model's context stops it. Also `feedPrompt`, which
 * beam search uses too.
 *
 * Leaves out: how a token is picked (greedy.ts, sample.ts) and several rows (beam.ts).
 */

import { AttentionTrace } from './attentionTrace';
import { checkLogitsLength, rowLogSumExp } from './logits';
import type { DecodeOptions, DecodeResult, DecodeStepper, StepOutput, StopReason, StreamingOptions } from './stepperContract';
import type { GenerationBudget } from './validate';

/** The trace for a decode, or null when attention is not captured. */
export function makeTrace(stepper: DecodeStepper, prompt: Int32Array, opts: DecodeOptions): AttentionTrace | null {
  if (opts.captureAttention !== true) return null;
  return new AttentionTrace(stepper.nHeads, opts.attentionIncludesPrompt === true ? 0 : prompt.length - 1);
}

/**
 * Feeds the prompt with rows = 1, one position per step, and returns the last step's output
 * (the logits that predict the first generated token). Captures attention for every prompt
 * step when the trace starts at position 0, otherwise only for the last one.
 */
export function feedPrompt(stepper: DecodeStepper, prompt: Int32Array, trace: AttentionTrace | null): StepOutput {
  const token = new Int32Array(1);
  let out: StepOutput | null = null;
  for (let i = 0; i < prompt.length; i++) {
    token[0] = prompt[i] as number;
    const capture = trace !== null && i >= trace.queryStart;
    out = stepper.step(token, capture);
    if (capture) trace.record(out.attention, 1);
  }
  return out as StepOutput; // the prompt is validated non-empty
}

/**
 * Chooses the next token from one row of logits [V] with its log-sum-exp `lse`
 * (log p(v) = logits[v] − lse). Must not keep `logits`: the stepper reuses it.
 */
export type PickToken = (logits: Float32Array, lse: number) => number;

/** Runs the one-row decode loop (see the file header); `budget` comes from validateCommon. */
export function decodeSingleRow(
  stepper: DecodeStepper, prompt: Int32Array, opts: StreamingOptions, budget: GenerationBudget, pick: PickToken,
): DecodeResult {
  const V = stepper.vocabSize;
  const trace = makeTrace(stepper, prompt, opts);
  let out = feedPrompt(stepper, prompt, trace);
  const token = new Int32Array(1);
  const tokens: number[] = [];
  const logprobs: number[] = [];
  let score = 0;
  let stopReason: StopReason = budget.limitReason;
  for (let k = 0; ; k++) {
    checkLogitsLength(out.logits, 1, V);
    const lse = rowLogSumExp(out.logits, 0, V, k);
    const t = pick(out.logits, lse);
    const lp = (out.logits[t] as number) - lse;
    tokens.push(t);
    logprobs.push(lp);
    score += lp;
    opts.onToken?.(t, lp);
    if (t === opts.eos) {
      stopReason = 'eos';
      break;
    }
    if (k + 1 >= budget.maxGenerated) break; // the last token is never fed
    token[0] = t;
    out = stepper.step(token, trace !== null);
    if (trace !== null) trace.record(out.attention, 1);
  }
  const result: DecodeResult = { tokens, logprobs, score, stopReason };
  return trace === null ? result : { ...result, attention: trace.assemble(new Int32Array(trace.length)) };
}
