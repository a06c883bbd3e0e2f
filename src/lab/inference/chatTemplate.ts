/**
 * A chat model's prompt: the conversation written out by the model's own chat template
 * (`tokenizer_config.json`'s `chat_template`, or `chat_template.jinja`), rendered with
 * Hugging Face's Jinja for JavaScript (npm `@huggingface/jinja`, the one transformers.js
 * uses), given what transformers' `apply_chat_template` gives a template: `messages`,
 * `add_generation_prompt`, the special tokens' text (`bos_token`, `eos_token`, `pad_token`,
 * `unk_token`); `raise_exception` and `strftime_now` are the library's. Its ids are the
 * rendered text's, encoded without adding BOS (the template writes it where its model wants
 * it, as `apply_chat_template` does).
 * Checked against transformers on Qwen's, Llama 3's and Gemma 3's templates
 * (test/unit/lab/inference/chatTemplate.test.ts).
 *
 * Leaves out: tools, documents and images (a template that needs them gets none), and
 * multi-turn conversations in the UI (Decode… and the playground send one user message).
 */

import { Template } from '@huggingface/jinja';
import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { HfTokenizer } from '../runs/hfTokenizer';

/** One turn of a conversation. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** The chat template of a run's tokenizer, or null when it has none (ours never do). */
export function chatTemplateOf(tok: Tokenizer): string | null {
  return tok instanceof HfTokenizer ? tok.chatTemplate : null;
}

/**
 * `messages` written out by the tokenizer's chat template, ending with the assistant's
 * header when `addGenerationPrompt` (the default). Throws EngineError('input/invalid') when
 * the run has no template or the template refuses the conversation (its raise_exception).
 */
export function renderChat(tok: Tokenizer, messages: readonly ChatMessage[], addGenerationPrompt = true): string {
  const source = chatTemplateOf(tok);
  if (source === null || !(tok instanceof HfTokenizer))
    throw new EngineError(
      'input/invalid',
      "This run's tokenizer has no chat template (tokenizer_config.json had none); decode without the chat option.",
    );
  const c = tok.config;
  let template: Template;
  try {
    template = new Template(source);
  } catch (e) {
    throw new EngineError(
      'tokenizer/invalid',
      `The chat template could not be read (${(e as Error).message}); decode without the chat option.`,
      { cause: e },
    );
  }
  try {
    return template.render({
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: addGenerationPrompt,
      bos_token: c.bosToken ?? '',
      eos_token: c.eosToken ?? '',
      pad_token: c.padToken ?? '',
      unk_token: c.unkToken ?? '',
    });
  } catch (e) {
    // The library's raise_exception throws the template's own message.
    throw new EngineError(
      'input/invalid',
      `The chat template refused the conversation (${(e as Error).message}); decode without the chat option.`,
      { cause: e },
    );
  }
}

/** Ids of `messages` as a chat model reads them: the rendered template, encoded with no BOS added. */
export function chatIds(tok: Tokenizer, messages: readonly ChatMessage[], addGenerationPrompt = true): Int32Array {
  return tok.encode(renderChat(tok, messages, addGenerationPrompt));
}
