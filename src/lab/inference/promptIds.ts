/**
 * How every job reads a decoder-only prompt: BOS then the text's tokens, except for a run whose
 * prompts start without BOS (Tokenizer.promptBos: a Hugging Face model whose tokenizer adds
 * none, the modular-addition task), so each job gives the model what it was trained on — and,
 * for an imported model, what transformers gives it.
 *
 * Leaves out: encoder-decoder sources (their tokens and EOS) and targets (BOS first, always).
 */

import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';

/** Whether `tok`'s run reads its prompts from BOS (true unless the tokenizer says otherwise). */
export function promptBos(tok: Tokenizer): boolean {
  return tok.promptBos !== false;
}

/** " (with BOS)" for a run whose prompts start with BOS, else "": for messages that count a prompt's tokens. */
export function withBosNote(tok: Tokenizer): string {
  return promptBos(tok) ? ' (with BOS)' : '';
}

/**
 * The ids a decoder-only job reads for `text`: BOS (where the run's prompts start with it) and
 * the text's tokens. Refuses a prompt of no tokens for a run without BOS, which has nothing to
 * read from.
 */
export function promptIds(tok: Tokenizer, text: string): Int32Array {
  const body = tok.encode(text);
  if (promptBos(tok)) return Int32Array.of(tok.specialIds.bos, ...body);
  if (body.length === 0)
    throw new EngineError(
      'input/invalid',
      "This model's prompts start without BOS (as it was trained), so an empty prompt gives it nothing to read; " +
        'type at least one token.',
    );
  return body;
}

/** `tok` with prompts read without BOS (a task that trains without it); every other property is `tok`'s. */
export function withoutPromptBos(tok: Tokenizer): Tokenizer {
  return Object.create(tok, { promptBos: { value: false, enumerable: true } }) as Tokenizer;
}
