/**
 * Boundary checks for decoding: the prompt and every option, each failure an
 * EngineError('input/invalid') that names the allowed range; and the generation budget
 * (how many tokens fit before `maxTokens` or the model's context stops the decode).
 *
 * Leaves out: checks of what the model returns (logits.ts, attentionTrace.ts).
 */

import { EngineError } from '../errors';
import type { DecodeOptions, DecodeStepper, StopReason } from './stepperContract';

function invalid(message: string): never {
  throw new EngineError('input/invalid', message);
}

/** Throws unless `value` is an integer in [min, max]. */
export function checkInt(name: string, value: number, min: number, max: number, fix: string): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer in [${min}, ${max}]`;
    invalid(`${name} must be ${range}, got ${String(value)}; ${fix}.`);
  }
}

/** Throws unless `value` is a finite number in the range that `ok` accepts (described by `range`). */
export function checkNumber(name: string, value: number, ok: (v: number) => boolean, range: string, fix: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || !ok(value)) {
    invalid(`${name} must be ${range}, got ${String(value)}; ${fix}.`);
  }
}

/** How far a decode may go, and why it stops when it gets there. */
export interface GenerationBudget {
  /** Most tokens that can be generated. */
  readonly maxGenerated: number;
  /** The stop reason of a hypothesis that reaches `maxGenerated` without EOS. */
  readonly limitReason: StopReason;
}

/**
 * Validates the prompt and the options shared by every decoder, and returns the budget.
 *
 * Generated token k is predicted by the query at position prompt.length − 1 + k, which must
 * be < maxPositions; the last generated token is never fed. So at most
 * maxPositions − prompt.length + 1 tokens fit, and a prompt that fills the context exactly
 * still gets one token. A sliding-window decode (`slide`) is limited by maxTokens alone.
 */
export function validateCommon(
  stepper: DecodeStepper,
  prompt: Int32Array,
  opts: DecodeOptions,
  slide = false,
): GenerationBudget {
  const V = stepper.vocabSize;
  if (prompt.length === 0) {
    invalid(
      'The prompt is empty; decoding needs at least one token to start from (BOS for an ' +
        'encoder-decoder, the tokenized prompt for a decoder-only model).',
    );
  }
  if (prompt.length > stepper.maxPositions) {
    invalid(
      `Prompt of ${prompt.length} tokens exceeds the context of ${stepper.maxPositions}; shorten it ` +
        `or retrain with a longer context.`,
    );
  }
  for (let i = 0; i < prompt.length; i++) {
    const t = prompt[i] as number;
    if (t < 0 || t >= V) {
      invalid(
        `Prompt token ${t} at index ${i} is outside the vocabulary [0, ${V}); tokenize the prompt ` +
          `with the model's own tokenizer.`,
      );
    }
  }
  checkInt('maxTokens', opts.maxTokens, 1, Number.MAX_SAFE_INTEGER, 'ask for at least one token');
  if (!Number.isInteger(opts.eos) || opts.eos < -1 || opts.eos >= V) {
    invalid(
      `eos must be a token id in [0, ${V}) or -1 for none, got ${String(opts.eos)}; pass the tokenizer's EOS id.`,
    );
  }
  const byContext = stepper.maxPositions - prompt.length + 1;
  return slide || opts.maxTokens <= byContext
    ? { maxGenerated: opts.maxTokens, limitReason: 'maxTokens' }
    : { maxGenerated: byContext, limitReason: 'context' };
}
