import { describe, expect, it } from 'vitest';
import {
  MISSING,
  formatBleu,
  formatBytes,
  formatCompact,
  formatCount,
  formatDuration,
  formatExample,
  formatLoss,
  formatLossDelta,
  formatNumber,
  formatPercent,
  formatPerplexity,
  formatProbDelta,
  formatTicks,
} from '../../../src/common/format';

describe('formatCount', () => {
  it('separates thousands with commas, whatever the locale', () => {
    expect([0, 7, 999, 1000, 12_345, 1_234_567, 124_439_808].map(formatCount)).toEqual([
      '0',
      '7',
      '999',
      '1,000',
      '12,345',
      '1,234,567',
      '124,439,808',
    ]);
  });

  it('rounds to whole numbers, keeps the sign and prints a non-number as missing', () => {
    expect([-1234, 999.5, -0.4, 1_000_000.4].map(formatCount)).toEqual(['-1,234', '1,000', '0', '1,000,000']);
    expect([Number.NaN, Number.POSITIVE_INFINITY].map(formatCount)).toEqual([MISSING, MISSING]);
  });
});

describe('formatCompact', () => {
  it('uses three significant digits and an SI prefix', () => {
    expect(
      [0, 7, 999, 1000, 1234, 12_345, 123_456, 1_234_567, 12_345_678, 124_439_808, 1.5e9, 2e12].map((n) =>
        formatCompact(n),
      ),
    ).toEqual(['0', '7', '999', '1k', '1.23k', '12.3k', '123k', '1.23M', '12.3M', '124M', '1.5G', '2T']);
  });

  it('moves to the next prefix when rounding reaches 1000 (999.6 → 1k, 999,500 → 1M)', () => {
    expect([999.4, 999.6, 99_950, 999_499, 999_500, 999_999_999].map((n) => formatCompact(n))).toEqual([
      '999',
      '1k',
      '100k',
      '999k',
      '1M',
      '1G',
    ]);
  });

  it('rounds small rates to whole numbers and keeps the sign', () => {
    expect([12.7, 0.3, -0.3, -1234, -12_345_678].map((n) => formatCompact(n))).toEqual([
      '13',
      '0',
      '0',
      '-1.23k',
      '-12.3M',
    ]);
    expect([Number.NaN, Number.NEGATIVE_INFINITY].map((n) => formatCompact(n))).toEqual([MISSING, MISSING]);
  });

  it('puts a unit after the prefix, with a space before both', () => {
    expect(formatCompact(1.234e10, 'FLOP/s')).toBe('12.3 GFLOP/s');
    expect(formatCompact(950, 'FLOP')).toBe('950 FLOP');
    expect(formatCompact(2.5e6, 'FLOP')).toBe('2.5 MFLOP');
  });
});

describe('formatBytes', () => {
  it('counts in powers of 1024 with one decimal below 10 and none above', () => {
    expect(
      [
        0,
        1,
        512,
        1023,
        1024,
        1536,
        10 * 1024,
        6.4 * 2 ** 20,
        64 * 2 ** 20,
        256 * 2 ** 20,
        1.5 * 2 ** 30,
        3 * 2 ** 40,
      ].map(formatBytes),
    ).toEqual([
      '0 B',
      '1 B',
      '512 B',
      '1023 B',
      '1 KB',
      '1.5 KB',
      '10 KB',
      '6.4 MB',
      '64 MB',
      '256 MB',
      '1.5 GB',
      '3 TB',
    ]);
  });

  it('rounds at the boundaries: 9.96 KB reads 10 KB, 1023.6 KB reads 1 MB', () => {
    expect(formatBytes(9.96 * 1024)).toBe('10 KB');
    expect(formatBytes(9.94 * 1024)).toBe('9.9 KB');
    expect(formatBytes(1023.6 * 1024)).toBe('1 MB');
    expect(formatBytes(1023.4 * 1024)).toBe('1023 KB');
    expect(formatBytes(1023.6)).toBe('1 KB');
  });

  it('prints a negative or non-number size as missing', () => {
    expect([-1, Number.NaN, Number.POSITIVE_INFINITY].map(formatBytes)).toEqual([MISSING, MISSING, MISSING]);
  });
});

describe('formatDuration', () => {
  it('prints milliseconds, tenths of seconds, seconds, minutes and hours', () => {
    expect([0, 0.0004, 0.012, 0.35, 1, 1.44, 9.9, 12, 59, 185, 3600, 3720, 100 * 3600].map(formatDuration)).toEqual([
      '0s',
      '<1ms',
      '12ms',
      '350ms',
      '1.0s',
      '1.4s',
      '9.9s',
      '12s',
      '59s',
      '3m05s',
      '1h00m',
      '1h02m',
      '100h00m',
    ]);
  });

  it('rounds before splitting: 0.9996 s is 1.0s, 9.96 s is 10s, 59.6 s is 1m00s, 3599.6 s is 1h00m', () => {
    expect([0.9996, 9.949, 9.96, 59.4, 59.6, 3599.4, 3599.6, 3659.9].map(formatDuration)).toEqual([
      '1.0s',
      '9.9s',
      '10s',
      '59s',
      '1m00s',
      '59m59s',
      '1h00m',
      '1h01m',
    ]);
  });

  it('prints a negative or non-number duration as missing', () => {
    expect([-1, Number.NaN, Number.POSITIVE_INFINITY].map(formatDuration)).toEqual([MISSING, MISSING, MISSING]);
  });
});

describe('formatLoss, formatPerplexity, formatBleu', () => {
  it('prints losses with four decimals, and missing before the first one', () => {
    expect([2.34567, 0, 10, 1e-7].map(formatLoss)).toEqual(['2.3457', '0.0000', '10.0000', '0.0000']);
    expect([formatLoss(null), formatLoss(Number.NaN), formatLoss(Number.POSITIVE_INFINITY)]).toEqual([
      MISSING,
      'NaN',
      'Infinity',
    ]);
  });

  it('prints perplexity and BLEU with two decimals', () => {
    expect([
      formatPerplexity(3.4371),
      formatPerplexity(1.0012),
      formatPerplexity(null),
      formatPerplexity(Number.POSITIVE_INFINITY),
    ]).toEqual(['3.44', '1.00', MISSING, 'Infinity']);
    expect([formatBleu(51.0213), formatBleu(0), formatBleu(100), formatBleu(null)]).toEqual([
      '51.02',
      '0.00',
      '100.00',
      MISSING,
    ]);
  });
});

describe('formatPercent', () => {
  it('prints a fraction as a percentage with one decimal, dropping ".0"', () => {
    expect([0, 0.125, 0.5, 0.875, 0.12345, 1, 1.5, -0.25].map(formatPercent)).toEqual([
      '0%',
      '12.5%',
      '50%',
      '87.5%',
      '12.3%',
      '100%',
      '150%',
      '-25%',
    ]);
  });

  it('never rounds a fraction that is not 0 or 1 to 0% or 100%', () => {
    expect([0.0004, 0.0005, 0.9996, 0.9994].map(formatPercent)).toEqual(['<0.1%', '0.1%', '>99.9%', '99.9%']);
  });

  it('prints a missing or non-number fraction as missing', () => {
    expect([null, Number.NaN].map(formatPercent)).toEqual([MISSING, MISSING]);
  });
});

describe('formatNumber', () => {
  it('uses fixed decimals for moderate values and exponents for tiny or huge ones', () => {
    expect([
      formatNumber(0),
      formatNumber(1.23456),
      formatNumber(1.5),
      formatNumber(1e-5),
      formatNumber(2e7),
      formatNumber(-0.25),
    ]).toEqual(['0', '1.235', '1.5', '1.00e-5', '2.00e+7', '-0.25']);
    expect(formatNumber(1.23456, 1)).toBe('1.2');
    expect([formatNumber(Number.NaN), formatNumber(Number.POSITIVE_INFINITY)]).toEqual(['NaN', 'Infinity']);
  });
});

describe('formatExample', () => {
  it('writes one line, cut at a word past 40 characters', () => {
    expect(formatExample('  ROMEO:\n  But soft ')).toBe('ROMEO: But soft');
    expect(formatExample('First Citizen:\nBefore we proceed any further, hear me speak.')).toBe(
      'First Citizen: Before we proceed any…',
    );
    expect(formatExample('x'.repeat(50))).toBe(`${'x'.repeat(40)}…`);
  });
});

describe('formatTicks', () => {
  it('gives close learning-rate ticks distinct, exact labels (no "0.001 / 0.001")', () => {
    const ticks = [0.00094, 0.00096, 0.00098, 0.001];
    const labels = formatTicks(ticks);
    expect(labels).toEqual(['0.00094', '0.00096', '0.00098', '0.001']);
    expect(new Set(labels).size).toBe(ticks.length);
  });

  it('uses as few digits as the axis needs, the same for every tick', () => {
    expect(formatTicks([0, 0.5, 1, 1.5])).toEqual(['0', '0.5', '1', '1.5']);
    expect(formatTicks([2, 2.5, 3])).toEqual(['2', '2.5', '3']);
    expect(formatTicks([1000, 2000, 3000])).toEqual(['1000', '2000', '3000']);
    expect(formatTicks([0.1 + 0.2, 0.4])).toEqual(['0.3', '0.4']);
  });

  it('writes tiny and huge axes in exponent form, distinct', () => {
    expect(formatTicks([2e-4, 4e-4, 6e-4])).toEqual(['2e-4', '4e-4', '6e-4']);
    expect(formatTicks([1.05e-4, 1.1e-4])).toEqual(['1.05e-4', '1.1e-4']);
    expect(formatTicks([2e6, 4e6])).toEqual(['2e6', '4e6']);
  });

  it('never repeats a label of distinct values, whatever the spacing', () => {
    for (const [lo, step] of [
      [0.001, 1e-7],
      [1, 1e-9],
      [123.4, 0.01],
      [5e-5, 1e-9],
    ] as const) {
      const ticks = [0, 1, 2, 3, 4].map((i) => lo + i * step);
      const labels = formatTicks(ticks);
      expect(new Set(labels).size, labels.join(' ')).toBe(5);
    }
  });
});

describe('formatLossDelta and formatProbDelta', () => {
  it('sign every change, say ±0 only for exactly zero, and keep the sign of tiny changes', () => {
    expect([0.0123, -0.5, 0, 1e-7, -1e-7, Number.NaN].map(formatLossDelta)).toEqual([
      '+0.0123',
      '\u22120.5000',
      '±0',
      '+0.0000',
      '\u22120.0000',
      'NaN',
    ]);
    expect([0.123, -0.004, 0, 0.0001, -0.0001, 0.5].map(formatProbDelta)).toEqual([
      '+12.3 pp',
      '\u22120.4 pp',
      '±0 pp',
      '+<0.1 pp',
      '\u2212<0.1 pp',
      '+50 pp',
    ]);
  });
});
