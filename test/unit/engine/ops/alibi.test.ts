import { describe, expect, it } from 'vitest';
import { alibiSlopes } from '../../../../src/engine/ops/alibi';

/** BLOOM's / the ALiBi paper's `get_slopes`, transcribed literally (geometric products). */
function getSlopes(n: number): number[] {
  const powerOf2 = (m: number): number[] => {
    const start = 2 ** -(2 ** -(Math.log2(m) - 3));
    return Array.from({ length: m }, (_, i) => start * start ** i);
  };
  if (Number.isInteger(Math.log2(n))) return powerOf2(n);
  const closest = 2 ** Math.floor(Math.log2(n));
  return [
    ...powerOf2(closest),
    ...getSlopes(2 * closest)
      .filter((_, i) => i % 2 === 0)
      .slice(0, n - closest),
  ];
}

describe('alibiSlopes', () => {
  it('for a power of two H: 2^(−8(h+1)/H)', () => {
    expect(Array.from(alibiSlopes(8))).toEqual([1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
    expect(Array.from(alibiSlopes(4))).toEqual([1 / 4, 1 / 16, 1 / 64, 1 / 256]);
    expect(Array.from(alibiSlopes(1))).toEqual([1 / 256]);
  });

  it('otherwise: the slopes of the power of two below, then the odd-indexed slopes of twice it', () => {
    // H = 6: n = 4 gives 2^-2, 2^-4, 2^-6, 2^-8; then 2n = 8 gives 2^-1, 2^-3.
    expect(Array.from(alibiSlopes(6))).toEqual([1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]);
    // H = 12: n = 8 gives 2^-1 … 2^-8; then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
    const s12 = Array.from(alibiSlopes(12));
    expect(s12.slice(0, 8)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((k) => 2 ** -k));
    s12.slice(8).forEach((v, k) => expect(v).toBeCloseTo(2 ** -(k + 0.5), 15));
  });

  it('agrees with the get_slopes of the paper for every H up to 40', () => {
    for (let H = 1; H <= 40; H++) {
      const ours = Array.from(alibiSlopes(H));
      const theirs = getSlopes(H);
      expect(ours.length).toBe(H);
      ours.forEach((v, h) => expect(Math.abs(v - (theirs[h] as number)), `H ${H}, head ${h}`).toBeLessThan(1e-15));
    }
  });

  it('writes into the buffer its allocator returns (float32 for a backend)', () => {
    const s = alibiSlopes(3, (n) => new Float32Array(n));
    expect(s).toBeInstanceOf(Float32Array);
    expect(Array.from(s)).toEqual([1 / 16, 1 / 256, 1 / 4]);
  });
});
