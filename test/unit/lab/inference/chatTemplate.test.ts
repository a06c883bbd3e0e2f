/**
 * Chat templates rendered with @huggingface/jinja against transformers' apply_chat_template
 * (goldens from scripts/tokenizers/make_golden.py): the same text and the same ids for Qwen's,
 * Llama 3's and Gemma 3's templates; a run without a template is refused in one line.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import type { ChatMessage } from '../../../../src/lab/inference/chatTemplate';
import { chatIds, chatTemplateOf, renderChat } from '../../../../src/lab/inference/chatTemplate';
import { hfTokenizerFromFiles } from '../../../../src/lab/runs/hfTokenizer';
import { GOLDEN, hfFiles } from '../runs/hfTokenizerFiles';

const CHAT = JSON.parse(readFileSync(join(GOLDEN, 'chat.json'), 'utf8')) as {
  conversation: ChatMessage[];
  models: Record<string, { text: string; ids: number[] }>;
};

describe('chat templates match transformers apply_chat_template', () => {
  for (const name of Object.keys(CHAT.models)) {
    it(`${name}: the same text and ids`, { timeout: 60_000 }, () => {
      const f = hfFiles(name);
      const tok = hfTokenizerFromFiles(f.tokenizer, f.config);
      const want = CHAT.models[name] as { text: string; ids: number[] };
      expect(renderChat(tok, CHAT.conversation)).toBe(want.text);
      expect(Array.from(chatIds(tok, CHAT.conversation))).toEqual(want.ids);
    });
  }

  it('without the generation prompt the text stops after the last message', () => {
    const f = hfFiles('qwen');
    const tok = hfTokenizerFromFiles(f.tokenizer, f.config);
    const text = renderChat(tok, [{ role: 'user', content: 'hi' }], false);
    expect(text).toBe('<|im_start|>user\nhi<|im_end|>\n');
  });

  it('a run without a template is refused in one line; a template error names itself', () => {
    const own = trainCharTokenizer(['abc']);
    expect(chatTemplateOf(own)).toBeNull();
    expect(() => renderChat(own, [{ role: 'user', content: 'x' }])).toThrow(/has no chat template/);
    const f = hfFiles('gpt2');
    const strict = hfTokenizerFromFiles(f.tokenizer, {
      chat_template:
        "{% if messages[0]['role'] != 'system' %}{{ raise_exception('a system message must come first') }}{% endif %}",
    });
    expect(() => renderChat(strict, [{ role: 'user', content: 'x' }])).toThrow(
      /refused the conversation \(.*a system message must come first\)/,
    );
  });
});
