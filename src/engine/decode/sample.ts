/**
 * Sampling: draw each token from the model's distribution, reshaped by temperature, then
 * top-k (Fan et al. 2018, "Hierarchical Neural Story Generation"), then top-p / nucleus
 * sampling (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration"), then
 * renormalized. The order is the one Hugging Face `generate` uses: top-p is measured on the
 * distribution that top-k already truncated and renormalized.
 *
 * - temperature τ: p(v) ∝ exp(x_v / τ); τ = 0 means greedy (no draw, no rng use).
 * - top-k: keep the k most probable tokens (0 = off); ties keep the lower id.
 * - top-p: keep the smallest prefix of the tokens sorted by probability whose mass is ≥ p
 *   (1 = off); the prefix always holds at least one token.
 * Each token costs exactly one `rng.next()`, so the same seed gives the same output.
 * The `logprobs` of the result are under the untempered, untruncated model distribution.
 *
 * Leaves out: repetition penalties, min-p, typical sampling; the decode loop (singleRow.ts).
 */

import type { Rng } from '../rng';
import { argmaxRow } from './logits';
import { decodeSingleRow } from './singleRow';
import { runSteps } from './stepperContract';
import type { DecodeResult, DecodeStepper, DecodeSteps, StreamingOptions } from './stepperContract';
import { TopK } from './topK';
import { checkInt, checkNumber, validateCommon } from './validate';

/** How the distribution is reshaped before a draw. */
export interface SamplingFilter {
  /** ≥ 0; 0 = greedy, 1 = the model's distribution. */
  readonly temperature: number;
  /** ≥ 0; 0 = off. */
  readonly topK: number;
  /** In (0, 1]; 1 = off. */
  readonly topP: number;
}

/** Options of `sampleDecode`. */
export interface SampleOptions extends StreamingOptions, SamplingFilter {
  /** The stream the draws come from (advanced by one `next()` per token). */
  readonly rng: Rng;
}

/** Below this k a top-k keeps a sorted short list; above it, a full sort is cheaper. */
const TOPK_LIST_MAX = 64;

/** Buffers for filtering one row of V logits and drawing from it; allocated once per decode. */
export class Sampler {
  /** ids[0..kept) are the tokens that may be drawn, most probable first when truncated. */
  readonly ids: Int32Array;
  /** weights[i] ∝ probability of ids[i]; their sum is returned by `filter`. */
  readonly weights: Float64Array;
  /** How many tokens the last `filter` kept. */
  kept = 0;
  private readonly top: TopK | null;

  /** `filter` must have temperature > 0 (temperature 0 is greedy and never samples). */
  constructor(
    private readonly V: number,
    private readonly filterOpts: SamplingFilter,
  ) {
    this.ids = new Int32Array(V);
    this.weights = new Float64Array(V);
    const k = filterOpts.topK;
    this.top = k > 0 && k < V && k <= TOPK_LIST_MAX ? new TopK(k) : null;
  }

  /**
   * Applies temperature, top-k and top-p to logits[0..V); returns the total weight W of the
   * kept tokens (their probabilities are weights[i] / W).
   */
  filter(logits: Float32Array): number {
    const { V, ids, weights } = this;
    const { temperature, topK, topP } = this.filterOpts;
    const truncK = topK > 0 && topK < V;
    let n = V;
    if (this.top !== null) {
      this.top.reset(topK);
      for (let v = 0; v < V; v++) this.top.push(logits[v] as number, v);
      ids.set(this.top.ids.subarray(0, topK));
      n = topK;
    } else if (truncK || topP < 1) {
      // x / τ is increasing in x, so the order of the logits is the order of the probabilities.
      for (let v = 0; v < V; v++) ids[v] = v;
      ids.sort((a, b) => (logits[b] as number) - (logits[a] as number) || a - b);
      if (truncK) n = topK;
    } else {
      for (let v = 0; v < V; v++) ids[v] = v;
    }
    // exp((x − max) / τ): the largest weight is exactly 1, so nothing overflows (softmax trick).
    let m = -Infinity;
    for (let i = 0; i < n; i++) m = Math.max(m, logits[ids[i] as number] as number);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const w = Math.exp(((logits[ids[i] as number] as number) - m) / temperature);
      weights[i] = w;
      total += w;
    }
    if (topP < 1) {
      // Smallest prefix with mass ≥ p. The running sum adds the same terms in the same
      // order as `total`, so it reaches p · total at the latest on the last token.
      const target = topP * total;
      let cum = 0;
      let i = 0;
      while (i < n) {
        cum += weights[i] as number;
        i++;
        if (cum >= target) break;
      }
      n = i;
      total = cum;
    }
    this.kept = n;
    return total;
  }

  /** Filters `logits` and draws one token with one `rng.next()`. */
  draw(logits: Float32Array, rng: Rng): number {
    const total = this.filter(logits);
    const u = rng.next() * total;
    let cum = 0;
    let last = this.ids[0] as number;
    for (let i = 0; i < this.kept; i++) {
      const w = this.weights[i] as number;
      if (w <= 0) continue;
      last = this.ids[i] as number;
      cum += w;
      if (cum > u) return last;
    }
    return last; // rounding left u at the very top: the last token with weight
  }
}

/** Throws EngineError('input/invalid') unless temperature, topK and topP are in range. */
export function validateSamplingFilter(f: SamplingFilter): void {
  checkNumber(
    'temperature',
    f.temperature,
    (v) => v >= 0,
    "a number ≥ 0 (0 = greedy, 1 = the model's own distribution)",
    'use 0.7–1.0 for varied but sensible text',
  );
  checkInt('topK', f.topK, 0, Number.MAX_SAFE_INTEGER, 'use 0 to turn top-k off');
  checkNumber(
    'topP',
    f.topP,
    (v) => v > 0 && v <= 1,
    'in (0, 1] (1 = off)',
    'use 0.9 for nucleus sampling or 1 to turn it off',
  );
}

/**
 * The distribution a sampler draws from for one row of logits (all of `logits`): the kept
 * tokens, most probable first when truncated, with renormalized probabilities. For
 * temperature 0 it is the argmax with probability 1. For tests and the decode playground.
 */
export function samplingDistribution(logits: Float32Array, filter: SamplingFilter): { ids: number[]; probs: number[] } {
  validateSamplingFilter(filter);
  if (filter.temperature === 0) return { ids: [argmaxRow(logits, 0, logits.length)], probs: [1] };
  const sampler = new Sampler(logits.length, filter);
  const total = sampler.filter(logits);
  const ids = Array.from(sampler.ids.subarray(0, sampler.kept));
  const probs = Array.from(sampler.weights.subarray(0, sampler.kept), (w) => w / total);
  return { ids, probs };
}

/**
 * Feeds `prompt`, then draws tokens (see the file header) until EOS (included), `maxTokens`
 * tokens, or the stepper's context is full (with `slide`, it goes on over a sliding window). `stepper` must be fresh
 * (empty cache, rows = 1).
 * Throws EngineError('input/invalid') for a bad prompt or option.
 */
export function sampleDecode(stepper: DecodeStepper, prompt: Int32Array, opts: SampleOptions): DecodeResult {
  return runSteps(stepper, sampleSteps(stepper, prompt, opts));
}

/** {@link sampleDecode} as steps (stepperContract.ts `DecodeSteps`), for a stepper on a device. */
export function* sampleSteps(
  stepper: DecodeStepper,
  prompt: Int32Array,
  opts: SampleOptions,
): DecodeSteps<DecodeResult> {
  const budget = validateCommon(stepper, prompt, opts, opts.slide === true);
  validateSamplingFilter(opts);
  const V = stepper.vocabSize;
  if (opts.temperature === 0)
    return yield* decodeSingleRow(stepper, prompt, opts, budget, (logits) => argmaxRow(logits, 0, V));
  const sampler = new Sampler(V, opts);
  return yield* decodeSingleRow(stepper, prompt, opts, budget, (logits) => sampler.draw(logits, opts.rng));
}
