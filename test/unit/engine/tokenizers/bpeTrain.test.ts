/**
 * Learning BPE merges: the incremental trainer (pair → words index, lazy heap) picks exactly the
 * merges of the naive reference that recounts everything each step, ties and long runs
 * included, stops when no pair occurs twice, and honours the target size.
 */

import { describe, it, expect } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { pairKey, trainBpeMerges } from '../../../../src/engine/tokenizers/bpeTrain';
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

  it('stops when no pair occurs twice', () => {
    expect(trainBpeMerges(['abcd'], 300)).toEqual([]);
    // "abab": (a,b) occurs twice → one merge; then (ab,ab) occurs once → stop.
    expect(trainBpeMerges(['abab'], 300)).toEqual([[byteId(0x61), byteId(0x62)]]);
    // Chunks count once per occurrence: " ab" twice across documents makes (␣,a) and (a,b) twice.
    expect(trainBpeMerges(['x ab', 'y ab'], 300)).toEqual([[byteId(0x20), byteId(0x61)], [260, byteId(0x62)]]);
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
