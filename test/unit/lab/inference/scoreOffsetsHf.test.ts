/**
 * Score's token ranges with Hugging Face tokenizers: Llama 2's SentencePiece tokens start
 * with the "▁" the tokenizer prepends, which the text does not have; the ranges still cover
 * the text token by token (before the fix every token spanned the whole text). Byte-level
 * files (Llama 3) are unaffected.
 */

import { describe, expect, it } from 'vitest';
import { tokenOffsets } from '../../../../src/lab/inference/score';
import { hfTokenizerFromFiles } from '../../../../src/lab/runs/hfTokenizer';
import { hfFiles } from '../runs/hfTokenizerFiles';

function ranges(name: string, text: string): string[] {
  const f = hfFiles(name);
  const tok = hfTokenizerFromFiles(f.tokenizer, f.config);
  const ids = tok.encode(text);
  const { starts, ends } = tokenOffsets(tok, ids, text);
  return starts.map((s, i) => text.slice(s, ends[i]));
}

describe('score ranges with SentencePiece and byte-level files', () => {
  it("Llama 2: the dummy prefix belongs to no character; each word is its token's range", () => {
    const got = ranges('llama2', 'Hello world');
    expect(got[0]).toBe('Hello');
    expect(got.join('')).toBe('Hello world');
    expect(got.length).toBeGreaterThan(1);
  });

  it('a text that starts with a space keeps it in the first range', () => {
    expect(ranges('llama2', ' Hello world').join('')).toBe(' Hello world');
    expect(ranges('llama3', ' Hello world')).toEqual([' Hello', ' world']);
  });
});
