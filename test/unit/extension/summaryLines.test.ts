import { describe, expect, it } from 'vitest';
import { dataLine, estimateLine, progressLine, skippedReasons } from '../../../src/extension/summaryLines';

describe('summaryLines', () => {
  it('summarizes skipped files by reason and the data of a run', () => {
    const skipped = [{ path: 'a', reason: 'binary' as const }, { path: 'b', reason: 'ignored' as const }, { path: 'c', reason: 'binary' as const }];
    expect(skippedReasons(skipped)).toBe('2 binary, 1 ignored by .gitignore');
    const d = { description: '4 documents under /w', documents: 4, bytes: 3 * 1024, trainTokens: 1, valTokens: 1, skipped };
    expect(dataLine(d)).toBe('4 files (3 KB) · skipped 3: 2 binary, 1 ignored by .gitignore');
    expect(dataLine({ ...d, bytes: 0, skipped: [] })).toBe('4 documents under /w');
  });

  it('estimates a configuration in one line', () => {
    expect(estimateLine(124_439, 6.4 * 1024 * 1024, 0.012)).toBe('124k parameters · ~6.4 MB · ≈ 12ms/step');
    expect(estimateLine(1_234_567, 48 * 1024 * 1024, null)).toBe('1.23M parameters · ~48 MB');
  });

  it('says a paused run is paused, not resuming', () => {
    expect(progressLine(120, 2000, 1.23456, false)).toBe('step 120/2000 · loss 1.2346');
    expect(progressLine(120, 2000, 1.23456, true)).toBe('paused at step 120/2000 · loss 1.2346 — Pause / Resume Training continues');
    expect(progressLine(0, 10, null, true)).toBe('paused at step 0/10 — Pause / Resume Training continues');
    expect(progressLine(0, 10, null, true)).not.toMatch(/resuming/i);
  });
});
