/** GPT-2 pre-tokenizer: chunks always rejoin to the input, and split where GPT-2's pattern does. */

import { describe, it, expect } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { pretokenize } from '../../../../src/engine/tokenizers/pretokenize';
import { randomText } from './randomText';

describe('pretokenize', () => {
  it('splits words, contractions, numbers, punctuation and whitespace like GPT-2', () => {
    expect(pretokenize("Hello world, it's 2024!\n\n  ok")).toEqual([
      'Hello',
      ' world',
      ',',
      ' it',
      "'s",
      ' 2024',
      '!',
      '\n\n ',
      ' ok',
    ]);
    expect(pretokenize("we'll   go")).toEqual(['we', "'ll", '  ', ' go']);
    expect(pretokenize('  ')).toEqual(['  ']);
    // GPT-2's quirk: a whitespace run right before a word gives up its last character.
    expect(pretokenize('a\r\nb')).toEqual(['a', '\r', '\n', 'b']);
    expect(pretokenize('a\r\n')).toEqual(['a', '\r\n']);
    expect(pretokenize('日本語 テキスト')).toEqual(['日本語', ' テキスト']);
    expect(pretokenize('x=1;')).toEqual(['x', '=', '1', ';']);
    expect(pretokenize('')).toEqual([]);
  });

  it('keeps lone surrogates and astral characters inside chunks that rejoin exactly', () => {
    const s = 'a\ud800b \udc00😀𠀀';
    expect(pretokenize(s).join('')).toBe(s);
  });

  it('gives non-empty chunks that rejoin to the input for thousands of random strings', () => {
    const rng = new Rng(11);
    let broken = 0,
      empty = 0,
      chunkCount = 0;
    for (let n = 0; n < 3000; n++) {
      const s = randomText(rng);
      const chunks = pretokenize(s);
      if (chunks.join('') !== s) broken++;
      for (const c of chunks) if (c.length === 0) empty++;
      chunkCount += chunks.length;
    }
    expect(broken).toBe(0);
    expect(empty).toBe(0);
    expect(chunkCount).toBeGreaterThan(3000 * 5); // strings really were split
  });
});
