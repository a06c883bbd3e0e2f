/**
 * Pair batches (src/lab/data/dataset.ts): sources padded to [B, S], the decoder reading BOS +
 * target and predicting target + EOS, padded to [B, T] — with BOS and EOS the tokenizer's
 * ids, whatever they are.
 */
import { describe, expect, it } from 'vitest';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { OWN_SPECIAL_IDS, PAD } from '../../../../src/engine/tokenizers/special';
import { pairBatch, tokenizePairs } from '../../../../src/lab/data/dataset';

const tok = trainCharTokenizer(['abc xyz']);
const { examples } = tokenizePairs(
  [
    { src: 'abc', tgt: 'xy' },
    { src: 'a', tgt: 'xyz' },
  ],
  tok,
  16,
);

describe('pairBatch', () => {
  it('pads sources, starts the decoder at BOS and ends the targets with EOS (our ids 1 and 2)', () => {
    const [a, b] = examples.map((e) => ({ src: Array.from(e.src), tgt: Array.from(e.tgt) }));
    if (!a || !b) throw new Error('two examples');
    const batch = pairBatch(examples, OWN_SPECIAL_IDS);
    expect([batch.B, batch.S, batch.T]).toEqual([2, 4, 4]);
    expect(Array.from(batch.src ?? [])).toEqual([...a.src, ...b.src, PAD, PAD]);
    expect(Array.from(batch.input)).toEqual([1, ...a.tgt, PAD, 1, ...b.tgt]);
    expect(Array.from(batch.targets)).toEqual([...a.tgt, 2, PAD, ...b.tgt, 2]);
  });

  it('takes BOS and EOS from the ids it is given, never our constants', () => {
    const batch = pairBatch(examples.slice(0, 1), { pad: 0, bos: 7, eos: 9, unk: -1 });
    const tgt = Array.from(examples[0]?.tgt ?? []);
    expect(Array.from(batch.input)).toEqual([7, ...tgt]);
    expect(Array.from(batch.targets)).toEqual([...tgt, 9]);
  });
});
