/**
 * Greedy decoding: at every step take the most probable token (the lowest id wins a tie).
 * The transformer paper decodes with beam search (beam.ts); greedy is beam search of width 1
 * and the fastest way to see what a model has learned.
 *
 * Leaves out: everything shared with sampling (singleRow.ts: the loop, stopping, attention).
 */

import { argmaxRow } from './logits';
import { decodeSingleRow } from './singleRow';
import { runSteps } from './stepperContract';
import type { DecodeResult, DecodeStepper, DecodeSteps, GreedyOptions } from './stepperContract';
import { validateCommon } from './validate';

/**
 * Feeds `prompt`, then appends the argmax token until EOS (included in the result),
 * `maxTokens` tokens, or the stepper's context is full (with `slide`, it goes on over a
 * sliding window). `stepper` must be fresh (empty
 * cache, rows = 1). Throws EngineError('input/invalid') for a bad prompt or option.
 */
export function greedyDecode(stepper: DecodeStepper, prompt: Int32Array, opts: GreedyOptions): DecodeResult {
  return runSteps(stepper, greedySteps(stepper, prompt, opts));
}

/** {@link greedyDecode} as steps (stepperContract.ts `DecodeSteps`), for a stepper on a device. */
export function* greedySteps(
  stepper: DecodeStepper,
  prompt: Int32Array,
  opts: GreedyOptions,
): DecodeSteps<DecodeResult> {
  const budget = validateCommon(stepper, prompt, opts, opts.slide === true);
  const V = stepper.vocabSize;
  return yield* decodeSingleRow(stepper, prompt, opts, budget, (logits) => argmaxRow(logits, 0, V));
}
