/**
 * The grokking progress measures' math (src/engine/analysis/fourier.ts): the Fourier basis of
 * Z_p is orthonormal; an embedding made of one frequency has all its spectrum there and that
 * frequency is key (a random one has none); the restricted and excluded losses of logits that
 * are exactly one frequency keep or lose all of them.
 */
import { describe, expect, it } from 'vitest';
import {
  embeddingSpectrum,
  fourierBasis,
  fourierLosses,
  keyFrequencies,
  lossAndAccuracy,
} from '../../../../src/engine/analysis/fourier';
import { Rng } from '../../../../src/engine/rng';

describe('Fourier basis of Z_p', () => {
  it.each([7, 8, 113])('p = %i: the p rows are orthonormal', (p) => {
    const B = fourierBasis(p);
    let worst = 0;
    for (let i = 0; i < p; i++)
      for (let j = 0; j < p; j++) {
        let dot = 0;
        for (let x = 0; x < p; x++) dot += (B[i * p + x] as number) * (B[j * p + x] as number);
        worst = Math.max(worst, Math.abs(dot - (i === j ? 1 : 0)));
      }
    expect(worst).toBeLessThan(1e-10);
  });
});

describe('embedding spectrum and key frequencies', () => {
  const p = 31;
  const C = 6;
  it('an embedding of one frequency has its whole norm there, and that frequency is the one key', () => {
    const k = 5;
    // rows start at id 4 (after the special tokens), as a tokenizer's ids would
    const rows = Array.from({ length: p }, (_, x) => 4 + x);
    const w = new Float64Array((4 + p) * C);
    for (let x = 0; x < p; x++)
      for (let c = 0; c < C; c++) w[(4 + x) * C + c] = Math.cos((2 * Math.PI * k * x) / p + c) * (c + 1);
    const s = embeddingSpectrum(w, C, rows);
    expect(s).toHaveLength((p - 1) / 2);
    let total = 0;
    for (let x = 0; x < p; x++) for (let c = 0; c < C; c++) total += (w[(4 + x) * C + c] as number) ** 2;
    expect((s[k - 1] as number) ** 2).toBeCloseTo(total, 8);
    expect(s.filter((v, i) => i !== k - 1 && v > 1e-9)).toHaveLength(0);
    expect(keyFrequencies(s)).toEqual([k]);
  });

  it('a random embedding has no key frequency', () => {
    const rng = new Rng(4);
    const w = Float64Array.from({ length: 113 * 128 }, () => rng.normal());
    expect(
      keyFrequencies(
        embeddingSpectrum(
          w,
          128,
          Array.from({ length: 113 }, (_, x) => x),
        ),
      ),
    ).toEqual([]);
  });
});

describe('restricted and excluded loss', () => {
  // logits[a, b, c] = β cos(θ_w (a + b − c)): exactly frequency w in the (a, b) directions of each column
  const p = 13;
  const w = 3;
  const beta = 4;
  const logits = new Float64Array(p * p * p);
  const targets = new Int32Array(p * p);
  const train = new Uint8Array(p * p);
  for (let a = 0; a < p; a++)
    for (let b = 0; b < p; b++) {
      const i = a * p + b;
      targets[i] = (a + b) % p;
      train[i] = (a * 7 + b) % 3 === 0 ? 1 : 0;
      for (let c = 0; c < p; c++) logits[i * p + c] = beta * Math.cos((2 * Math.PI * w * (a + b - c)) / p);
    }
  const full = lossAndAccuracy(logits, p, targets, null);
  const fullTrain = lossAndAccuracy(logits, p, targets, train);

  it('the constructed logits answer every pair right', () => {
    expect(full.acc).toBe(1);
    expect(full.loss).toBeLessThan(Math.log(p) - 1);
  });

  it('with that frequency key: the restricted loss is the full loss, the excluded loss is ln p (nothing left)', () => {
    const r = fourierLosses(logits, p, p, targets, train, [w]);
    expect(r.restrictedLoss).toBeCloseTo(full.loss, 9);
    expect(r.excludedLoss).toBeCloseTo(Math.log(p), 9);
  });

  it('with another frequency key: the restricted loss is ln p, the excluded loss the full loss on training pairs', () => {
    const r = fourierLosses(logits, p, p, targets, train, [w + 1]);
    expect(r.restrictedLoss).toBeCloseTo(Math.log(p), 9);
    expect(r.excludedLoss).toBeCloseTo(fullTrain.loss, 9);
  });
});
