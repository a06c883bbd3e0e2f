/**
 * GPT-2's pre-tokenizer: split text into chunks that BPE merges never cross, so a token
 * never spans a word and the next word's leading space, or letters and digits.
 *
 * The pattern is the one in GPT-2's `encoder.py` (Radford et al. 2019, "Language Models are
 * Unsupervised Multitask Learners", §2.2 on byte-level BPE):
 *   's|'t|'re|'ve|'m|'ll|'d | ␣?\p{L}+ | ␣?\p{N}+ | ␣?[^\s\p{L}\p{N}]+ | \s+(?!\S) | \s+
 * i.e. English contractions, letter runs, digit runs and punctuation runs each with an
 * optional leading space, then whitespace (a run before a word leaves its last space to the
 * word). Every code point (a lone surrogate too, which the `u` flag reads as one code point)
 * falls in one alternative, so the chunks always concatenate back to the input.
 *
 * Checked against GPT-2's: the alternatives are encoder.py's, in its order (the seven
 * contractions share one group, which matches the same text); test/unit/engine/tokenizers/gpt2Files.test.ts
 * compares whole encodings with the npm package gpt-3-encoder, which runs this pattern in
 * JavaScript. What `\s` means for a few rare code points can differ from GPT-2's Python
 * (the `regex` module): JavaScript counts U+FEFF as a space and Python does not, and
 * Python's Unicode tables may count U+001C..U+001F or U+0085; text with those may split
 * differently from Python's GPT-2 tokenizer (not verified here: no `regex` module).
 *
 * Leaves out: other languages' contraction rules, digit grouping (GPT-4 splits digits into
 * groups of three), and the bytes-to-unicode table GPT-2 uses only to store its vocabulary.
 */

/** Name of this pre-tokenizer in saved tokenizers. */
export const PRETOKENIZER_NAME = 'gpt2';

/** The pattern's source; a RegExp is built per call because a sticky RegExp carries state (lastIndex). */
const GPT2_SOURCE = String.raw`'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;

/**
 * Calls `onChunk` for each chunk of `text` in order. Chunks are non-empty and join to `text`.
 */
export function forEachChunk(text: string, onChunk: (chunk: string) => void): void {
  const re = new RegExp(GPT2_SOURCE, 'uy');
  let pos = 0;
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    // Unreachable by construction (every code point matches an alternative); kept so a
    // future edit of the pattern cannot silently drop text.
    const end = m === null || m[0].length === 0 ? pos + 1 : pos + m[0].length;
    onChunk(text.slice(pos, end));
    pos = end;
  }
}

/** The chunks of `text` as an array (see {@link forEachChunk}). */
export function pretokenize(text: string): string[] {
  const out: string[] = [];
  forEachChunk(text, (c) => out.push(c));
  return out;
}
