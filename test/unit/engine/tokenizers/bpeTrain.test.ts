/**
 * Learning BPE merges: the incremental trainer (pair → words index, lazy heap) picks exactly the
 * merges of the naive reference that recounts everything each step, ties and long runs
 * included, stops when no pair occurs twice, and honours the target size.
 */

import { describe, it, expect } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import {
  ChunkCounts,
  MAX_TRAIN_WORD_BYTES,
  pairKey,
  trainBpeMerges,
  trainingWords,
} from '../../../../src/engine/tokenizers/bpeTrain';
import { byteId } from '../../../../src/engine/tokenizers/special';
import { naiveMerges, tinyAlphabetText } from './naiveBpe';
import { randomText } from './randomText';

describe('trainBpeMerges', () => {
  it('learns the same merges as the naive reference (ties, runs, multi-byte text)', () => {
    const rng = new Rng(31);
    const cases: [string[], number][] = [
      [Array.from({ length: 30 }, () => tinyAlphabetText(rng, 60)), 50],
      [Array.from({ length: 60 }, () => randomText(rng, 30)), 50],
      [['aaaaaaa aaaa aaaaa', 'abababab baba'], 4],
    ];
    for (const [corpus, minMerges] of cases) {
      const expected = naiveMerges(corpus, 420);
      expect(expected.length).toBeGreaterThanOrEqual(minMerges); // the comparison is not vacuous
      expect(trainBpeMerges(corpus, 420)).toEqual(expected);
    }
  });

  // A chunk of megabytes (minified code, base64, unspaced script) was one word that every
  // merge rewrote whole: 1 MB of such text took minutes. It is learned from in pieces now.
  it('learns a chunk longer than MAX_TRAIN_WORD_BYTES from its pieces, as the reference does', () => {
    const rng = new Rng(5);
    const long = Array.from({ length: 5 * MAX_TRAIN_WORD_BYTES + 17 }, () => 'abcd'[rng.int(4)]).join('');
    const corpus = [`${long} the end`, long.slice(3)];
    const expected = naiveMerges(corpus, 330);
    expect(expected.length).toBe(70);
    expect(trainBpeMerges(corpus, 330)).toEqual(expected);
  });

  it('never learns from a word longer than MAX_TRAIN_WORD_BYTES; equal pieces are one word', () => {
    const counts = new ChunkCounts();
    counts.add('xy'.repeat(500_000)); // one pre-tokenizer chunk of 1 MB
    counts.add('short words here');
    const { symbols, freqs } = trainingWords(counts);
    expect(Math.max(...symbols.map((w) => w.length))).toBe(MAX_TRAIN_WORD_BYTES);
    // 1 MB of "xy" is 7813 pieces of 128 bytes (one shorter at the end): two distinct words.
    expect(freqs.slice(0, 2)).toEqual([7812, 1]);
    expect(symbols.length).toBe(2 + 3);
  });

  it('stops when no pair occurs twice', () => {
    expect(trainBpeMerges(['abcd'], 300)).toEqual([]);
    // "abab": (a,b) occurs twice → one merge; then (ab,ab) occurs once → stop.
    expect(trainBpeMerges(['abab'], 300)).toEqual([[byteId(0x61), byteId(0x62)]]);
    // Chunks count once per occurrence: " ab" twice across documents makes (␣,a) and (a,b) twice.
    expect(trainBpeMerges(['x ab', 'y ab'], 300)).toEqual([
      [byteId(0x20), byteId(0x61)],
      [260, byteId(0x62)],
    ]);
  });

  it('learns exactly vocabSize − 260 merges when pairs remain', () => {
    const rng = new Rng(33);
    const corpus = Array.from({ length: 100 }, () => tinyAlphabetText(rng, 100));
    expect(trainBpeMerges(corpus, 270).length).toBe(10);
    expect(trainBpeMerges(corpus, 260)).toEqual([]);
  });

  it('orders pair keys lexicographically by (a, b)', () => {
    expect(pairKey(5, 1000)).toBeLessThan(pairKey(6, 4));
    expect(pairKey(5, 4)).toBeLessThan(pairKey(5, 6));
  });
});
