import { describe, it, expect } from 'vitest';
import { argmaxRow, checkLogitsLength, rowLogSumExp } from '../../../../src/engine/decode/logits';
import { EngineError } from '../../../../src/engine/errors';

describe('rowLogSumExp', () => {
  it('matches the direct formula on moderate logits, per row', () => {
    const x = Float32Array.of(9, 9, 9, 0.5, -1, 2);
    expect(rowLogSumExp(x, 3, 3, 0)).toBeCloseTo(Math.log(Math.exp(0.5) + Math.exp(-1) + Math.exp(2)), 12);
    expect(rowLogSumExp(x, 0, 3, 0)).toBeCloseTo(9 + Math.log(3), 12);
  });

  it('does not overflow or underflow', () => {
    expect(rowLogSumExp(Float32Array.of(3e4, 3e4), 0, 2, 0)).toBeCloseTo(3e4 + Math.log(2), 9);
    expect(rowLogSumExp(Float32Array.of(3e38, 3e38), 0, 2, 0)).toBe(Math.fround(3e38)); // Σ exp would be +∞
    expect(rowLogSumExp(Float32Array.of(-1e4, -1e4 - 1), 0, 2, 0)).toBeCloseTo(-1e4 + Math.log(1 + Math.exp(-1)), 8);
    expect(rowLogSumExp(Float32Array.of(-Infinity, 0), 0, 2, 0)).toBe(0);
  });

  it.each([[[0, NaN]], [[NaN, 0]], [[Infinity, 0]], [[-Infinity, -Infinity]]])(
    'throws train/nonFinite for %j',
    (row) => {
      let e: unknown;
      try {
        rowLogSumExp(Float32Array.from(row), 0, 2, 4);
      } catch (err) {
        e = err;
      }
      expect(EngineError.is(e, 'train/nonFinite')).toBe(true);
      expect((e as Error).message).toMatch(/decode step 4/);
    },
  );
});

describe('argmaxRow', () => {
  it('finds the first maximum within the row', () => {
    expect(argmaxRow(Float32Array.of(5, 1, 3, 3, 2), 1, 4)).toBe(1);
    expect(argmaxRow(Float32Array.of(-Infinity, -2, -1), 0, 3)).toBe(2);
  });
});

describe('checkLogitsLength', () => {
  it('throws shape/mismatch when a step returns too few logits', () => {
    expect(() => checkLogitsLength(new Float32Array(6), 2, 3)).not.toThrow();
    let e: unknown;
    try {
      checkLogitsLength(new Float32Array(5), 2, 3);
    } catch (err) {
      e = err;
    }
    expect(EngineError.is(e, 'shape/mismatch')).toBe(true);
  });
});
