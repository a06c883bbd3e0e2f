/**
 * The diagnostic sequence that induction is measured on (src/lab/headScores.ts): drawn from
 * the tokens the run trained, never from byte ids whose embeddings are still random.
 */
import { describe, expect, it } from 'vitest';
import { Transformer } from '../../../src/engine/models/transformer';
import { BASE_VOCAB, BOS, NUM_SPECIAL } from '../../../src/engine/tokenizers/special';
import { diagnosticBatch } from '../../../src/lab/headScores';
import { tinyConfig } from '../engine/models/fixtures';

function diag(vocabSize: number, maxLen: number): number[] {
  const b = diagnosticBatch(new Transformer(tinyConfig('decoder-only', { vocabSize, maxLen }), { maxBatch: 1 }), 3);
  expect(b).not.toBeNull();
  return Array.from(b?.input ?? []);
}

describe('the diagnostic batch', () => {
  it('draws from the learned entries and is no longer than they allow (26 letters in a context of 64)', () => {
    const ids = diag(BASE_VOCAB + 26, 64);
    expect(ids).toHaveLength(52); // BOS + 26 + 25: capped at the 26 learned entries, not 32
    expect(ids[0]).toBe(BOS);
    const seg = ids.slice(1, 27);
    expect(seg.every((t) => t >= BASE_VOCAB && t < BASE_VOCAB + 26)).toBe(true);
    expect(new Set(seg).size).toBe(26);
    expect(ids.slice(27)).toEqual(seg.slice(0, 25));
  });

  it('takes 32 learned tokens where the vocabulary has them, and byte ids only when it has almost none', () => {
    expect(diag(BASE_VOCAB + 100, 128)).toHaveLength(64);
    const bytes = diag(BASE_VOCAB + 2, 16);
    expect(bytes).toHaveLength(16);
    expect(bytes.slice(1).every((t) => t >= NUM_SPECIAL)).toBe(true);
    expect(bytes.slice(1).some((t) => t < BASE_VOCAB)).toBe(true);
  });
});
