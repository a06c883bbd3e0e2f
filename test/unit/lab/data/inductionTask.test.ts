import { describe, expect, it } from 'vitest';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { BOS, PAD } from '../../../../src/engine/tokenizers/special';
import {
  INDUCTION_ALPHABET,
  alphabetIds,
  inductionDataset,
  inductionPrompts,
  repeatBatch,
  segmentLength,
} from '../../../../src/lab/data/inductionTask';

const tok = trainCharTokenizer([INDUCTION_ALPHABET]);

describe('the induction task', () => {
  it('trains on repeats (BOS, filler, a segment and its repeat; loss on the repeat) and letter chains (loss on every token)', () => {
    const ds = inductionDataset(tok, 1, 64, 16);
    const b = ds.trainBatch(1);
    expect([b.B, b.T]).toEqual([64, 16]);
    const lengths = new Set<number>();
    let repeats = 0;
    let chains = 0;
    for (let r = 0; r < b.B; r++) {
      const input = Array.from(b.input.subarray(r * 16, (r + 1) * 16));
      const targets = Array.from(b.targets.subarray(r * 16, (r + 1) * 16));
      expect(input[0]).toBe(BOS);
      const seq = [...input, targets[15] as number];
      const first = targets.findIndex((t) => t !== PAD);
      expect(targets.slice(first).every((t) => t !== PAD)).toBe(true);
      if (first === 1) {
        // A chain: a handful of letters, each mostly followed by the same successor (its rule).
        chains++;
        const letters = new Set(seq.slice(1));
        expect(letters.size).toBeGreaterThanOrEqual(2);
        expect(letters.size).toBeLessThanOrEqual(10);
        const follow = new Map<number, Map<number, number>>();
        for (let i = 1; i < 16; i++) {
          const m = follow.get(seq[i] as number) ?? new Map<number, number>();
          m.set(seq[i + 1] as number, (m.get(seq[i + 1] as number) ?? 0) + 1);
          follow.set(seq[i] as number, m);
        }
        const agree = [...follow.values()].reduce((a, m) => a + Math.max(...m.values()), 0);
        expect(agree / 15).toBeGreaterThan(0.6);
        continue;
      }
      repeats++;
      const L = 16 - first + 1; // the first loss row predicts the repeat's second token
      lengths.add(L);
      const seg = seq.slice(17 - 2 * L, 17 - L);
      expect(seq.slice(17 - L)).toEqual(seg);
      expect(new Set(seq.slice(1, 17 - L)).size).toBe(16 - L); // filler and segment letters all distinct
    }
    expect(repeats).toBeGreaterThan(16);
    expect(chains).toBeGreaterThan(16);
    expect(lengths.size).toBeGreaterThan(1); // L varies, so no fixed offset finds the earlier copy
  });

  it('validates on repeats only', () => {
    const ds = inductionDataset(tok, 1, 64, 16);
    for (const v of ds.valBatches()) {
      for (let r = 0; r < v.B; r++) expect(v.targets[r * v.T + 1]).toBe(PAD); // the loss starts in the repeat, never at row 1
    }
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

  it('a segment without filler is BOS + seg + seg, from the BOS id it is given', () => {
    const ids = alphabetIds(tok).slice(0, 3);
    const b = repeatBatch([{ filler: [], segment: ids }], tok.specialIds.bos);
    expect(Array.from(b.input)).toEqual([BOS, ...ids, ...ids.slice(0, 2)]);
    expect(Array.from(b.targets)).toEqual([PAD, PAD, PAD, PAD, ids[1], ids[2]]);
    // A vocabulary laid out otherwise (GPT-2's <|endoftext|> last) starts from its own BOS.
    expect(Array.from(repeatBatch([{ filler: [], segment: ids }], 50256).input)).toEqual([
      50256,
      ...ids,
      ...ids.slice(0, 2),
    ]);
  });

  it('needs a context of at least 6 positions', () => {
    expect(() => segmentLength(5)).toThrow(/at least 6 positions/);
  });
});
