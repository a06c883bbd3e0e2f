import { describe, expect, it } from 'vitest';
import { dataLine, estimateLine, formatBytes, formatCount, formatDuration, formatLoss, skippedReasons } from '../../../src/extension/format';

describe('format', () => {
  it('counts with k / M / G', () => {
    expect([999, 1234, 12_345, 124_439_808, 2.5e9].map(formatCount)).toEqual(['999', '1.2k', '12k', '124.4M', '2.5G']);
  });

  it('bytes in powers of 1024', () => {
    expect([512, 2048, 6.4 * 1024 * 1024, 1.5 * 1024 ** 3].map(formatBytes)).toEqual(['512 B', '2.0 KB', '6.4 MB', '1.5 GB']);
  });

  it('durations from milliseconds to hours', () => {
    expect([0.0004, 0.035, 1.44, 42, 200, 7500].map(formatDuration)).toEqual(['1 ms', '35 ms', '1.4 s', '42 s', '3 min 20 s', '2 h 5 min']);
    expect(formatDuration(Number.NaN)).toBe('?');
  });

  it('losses, and a dash before there is one', () => {
    expect([formatLoss(2.34567), formatLoss(null), formatLoss(Number.NaN)]).toEqual(['2.346', '–', '–']);
  });

  it('summarizes skipped files by reason and the data of a run', () => {
    const skipped = [{ path: 'a', reason: 'binary' as const }, { path: 'b', reason: 'ignored' as const }, { path: 'c', reason: 'binary' as const }];
    expect(skippedReasons(skipped)).toBe('2 binary, 1 ignored by .gitignore');
    const d = { description: '4 documents under /w', documents: 4, bytes: 3 * 1024, trainTokens: 1, valTokens: 1, skipped };
    expect(dataLine(d)).toBe('4 files (3.0 KB) · skipped 3: 2 binary, 1 ignored by .gitignore');
    expect(dataLine({ ...d, bytes: 0, skipped: [] })).toBe('4 documents under /w');
    expect(estimateLine(124_439, 6.4 * 1024 * 1024, 0.012)).toBe('124k parameters · ~6.4 MB · ≈ 12 ms/step');
  });
});
