/**
 * The decode loop shared by greedy decoding and sampling: feed the prompt (rows = 1; in one
 * prefill where the stepper can), then repeatedly pick a token from the newest logits, report it, and feed
 * it back, until EOS, `maxTokens` (and then the character it split, with `complete`), or the model's context stops it —
 * or, with `slide`, past
 * the context over a sliding window (the stepper is reset and re-primed with the last
 * `slideKeep(context)` tokens whenever its cache is full). Also `feedPrompt`, which beam
 * search uses too. Written as steps (stepperContract.ts `DecodeSteps`): each yields after a
 * stepper call, before it reads the call's output.
 *
 * Leaves out: how a token is picked (greedy.ts, sample.ts) and several rows (beam.ts).
 */

import { AttentionTrace } from './attentionTrace';
import { checkLogitsLength, rowLogSumExp } from './logits';
import { MAX_FINISHING_TOKENS, slideKeep } from './stepperContract';
import type {
  DecodeOptions,
  DecodeResult,
  DecodeSteps,
  DecodeStepper,
  SlideInfo,
  StepOutput,
  StopReason,
  StreamingOptions,
} from './stepperContract';
import type { GenerationBudget } from './validate';

/** The trace for a decode, or null when attention is not captured. */
export function makeTrace(stepper: DecodeStepper, prompt: Int32Array, opts: DecodeOptions): AttentionTrace | null {
  if (opts.captureAttention !== true) return null;
  return new AttentionTrace(stepper.nHeads, opts.attentionIncludesPrompt === true ? 0 : prompt.length - 1);
}

/**
 * Feeds the prompt with rows = 1 and returns the last position's output (the logits that
 * predict the first generated token): in one prefill where the stepper has one, unless the
 * trace starts at position 0 and so needs every prompt position's attention, one position
 * per step otherwise. Captures attention for every prompt step when the trace starts at
 * position 0, otherwise only for the last one.
 */
export function* feedPrompt(
  stepper: DecodeStepper,
  prompt: Int32Array,
  trace: AttentionTrace | null,
): DecodeSteps<StepOutput> {
  if (stepper.prefill && (trace === null || trace.queryStart >= prompt.length - 1)) {
    const out = stepper.prefill(prompt, trace !== null);
    yield;
    if (trace !== null) trace.record(out.attention, 1);
    return out;
  }
  const token = new Int32Array(1);
  let out: StepOutput | null = null;
  for (let i = 0; i < prompt.length; i++) {
    token[0] = prompt[i] as number;
    const capture = trace !== null && i >= trace.queryStart;
    out = stepper.step(token, capture);
    yield;
    if (capture) trace.record(out.attention, 1);
  }
  return out as StepOutput; // the prompt is validated non-empty
}

/**
 * Chooses the next token from one row of logits [V] with its log-sum-exp `lse`
 * (log p(v) = logits[v] − lse). Must not keep `logits`: the stepper reuses it.
 */
export type PickToken = (logits: Float32Array, lse: number) => number;

/** The one-row decode loop (see the file header) as steps; `budget` comes from validateCommon. */
export function* decodeSingleRow(
  stepper: DecodeStepper,
  prompt: Int32Array,
  opts: StreamingOptions,
  budget: GenerationBudget,
  pick: PickToken,
): DecodeSteps<DecodeResult> {
  const V = stepper.vocabSize;
  const trace = makeTrace(stepper, prompt, opts);
  let out = yield* feedPrompt(stepper, prompt, trace);
  const context = Array.from(prompt); // prompt, then every generated token
  let fed = prompt.length; // positions in the stepper's cache
  let slides = 0;
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
    context.push(t);
    score += lp;
    opts.onToken?.(t, lp);
    if (t === opts.eos) {
      stopReason = 'eos';
      break;
    }
    // The last token is never fed; past maxTokens only to finish a character, within the context.
    const finishing =
      budget.limitReason === 'maxTokens' &&
      opts.complete !== undefined &&
      k + 1 < budget.maxGenerated + MAX_FINISHING_TOKENS &&
      (opts.slide === true || fed < stepper.maxPositions) &&
      !opts.complete(tokens);
    if (k + 1 >= budget.maxGenerated && !finishing) break;
    if (fed >= stepper.maxPositions) {
      // The cache is full (only reachable with `slide`: the budget stops a plain decode first).
      out = yield* reprime(stepper, context, slideKeep(stepper.maxPositions), trace);
      fed = slideKeep(stepper.maxPositions);
      slides++;
      continue;
    }
    token[0] = t;
    out = stepper.step(token, trace !== null);
    yield;
    fed++;
    if (trace !== null) trace.record(out.attention, 1, context.length - fed);
  }
  const slid: SlideInfo | null = slides > 0 ? { slides, window: fed } : null;
  const result: DecodeResult = { tokens, logprobs, score, stopReason, ...(slid ? { slid } : {}) };
  return trace === null ? result : { ...result, attention: trace.assemble(new Int32Array(trace.length)) };
}

/**
 * Resets the stepper and feeds the last `keep` tokens of `context` from position 0, so the
 * model sees them as nanoGPT's cropped `idx[:, -block_size:]`; returns the logits after the
 * newest. Records the newest token's attention at its place in the whole context.
 */
function* reprime(
  stepper: DecodeStepper,
  context: readonly number[],
  keep: number,
  trace: AttentionTrace | null,
): DecodeSteps<StepOutput> {
  stepper.reset();
  const start = context.length - keep;
  if (stepper.prefill) {
    const out = stepper.prefill(Int32Array.from(context.slice(start)), trace !== null);
    yield;
    if (trace !== null) trace.record(out.attention, 1, start);
    return out;
  }
  const token = new Int32Array(1);
  let out: StepOutput | null = null;
  for (let i = start; i < context.length; i++) {
    token[0] = context[i] as number;
    const capture = trace !== null && i === context.length - 1;
    out = stepper.step(token, capture);
    yield;
    if (capture) trace.record(out.attention, 1, start);
  }
  return out as StepOutput; // keep ≥ 1
}
