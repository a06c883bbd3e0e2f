import { describe, expect, it } from 'vitest';
import { trainCharTokenizer } from '../../../src/engine/tokenizers/charTokenizer';
import { BOS, PAD } from '../../../src/engine/tokenizers/special';
import { INDUCTION_ALPHABET, alphabetIds, inductionDataset, inductionPrompts, repeatBatch, segmentLength } from '../../../src/lab/inductionTask';

const tok = trainCharTokenizer([INDUCTION_ALPHABET]);

describe('the induction task', () => {
  it('lays out BOS, filler, a segment and its repeat, with the loss on the repeat only', () => {
    const ds = inductionDataset(tok, 1, 8, 16);
    const b = ds.trainBatch(1);
    expect([b.B, b.T]).toEqual([8, 16]);
    const lengths = new Set<number>();
    for (let r = 0; r < b.B; r++) {
      const input = Array.from(b.input.subarray(r * 16, (r + 1) * 16));
      const targets = Array.from(b.targets.subarray(r * 16, (r + 1) * 16));
      expect(input[0]).toBe(BOS);
      const first = targets.findIndex((t) => t !== PAD); // predicts the repeat's second token
      const L = 16 - first + 1;
      lengths.add(L);
      expect(targets.slice(first).every((t) => t !== PAD)).toBe(true);
      const seq = [...input, targets[15] as number];
      const seg = seq.slice(17 - 2 * L, 17 - L);
      expect(seq.slice(17 - L)).toEqual(seg);
      expect(new Set(seq.slice(1, 17 - L)).size).toBe(16 - L); // filler and segment letters all distinct
    }
    expect(lengths.size).toBeGreaterThan(1); // L varies, so no fixed offset finds the earlier copy
  });

  it('is a pure function of (seed, step); validation is fixed', () => {
    const a = inductionDataset(tok, 5, 4, 24);
    const b = inductionDataset(tok, 5, 4, 24);
    expect(a.trainBatch(3).input).toEqual(b.trainBatch(3).input);
    expect(a.trainBatch(3).input).not.toEqual(a.trainBatch(4).input);
    expect(a.valBatches()[0]?.input).toEqual(b.valBatches()[0]?.input);
    expect(a.probe().B).toBe(1);
    expect(inductionPrompts(tok, 5, 24, 3)).toHaveLength(3);
  });

  it('a segment without filler is BOS + seg + seg', () => {
    const ids = alphabetIds(tok).slice(0, 3);
    const b = repeatBatch([{ filler: [], segment: ids }]);
    expect(Array.from(b.input)).toEqual([BOS, ...ids, ...ids.slice(0, 2)]);
    expect(Array.from(b.targets)).toEqual([PAD, PAD, PAD, PAD, ids[1], ids[2]]);
  });

  it('needs a context of at least 6 positions', () => {
    expect(() => segmentLength(5)).toThrow(/at least 6 positions/);
  });
});
