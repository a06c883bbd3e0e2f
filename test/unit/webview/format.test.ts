import { describe, expect, it } from 'vitest';
import { fmt, fmtBytes, fmtCount, isPadToken, showToken } from '../../../webview/format';

describe('format', () => {
  it('makes whitespace in tokens visible', () => {
    expect(showToken('a b\n')).toBe('a␣b↵');
    expect(showToken('')).toBe('∅');
    expect(isPadToken('<pad>')).toBe(true);
    expect(isPadToken('pad')).toBe(false);
  });

  it('numbers, counts and sizes', () => {
    expect(fmt(1.23456)).toBe('1.235');
    expect(fmt(0.0001234)).toBe('1.23e-4');
    expect(fmt(2e6)).toBe('2.00e+6');
    expect(fmtCount(68942)).toBe('68.9 k');
    expect(fmtCount(3_500_000)).toBe('3.50 M');
    expect(fmtBytes(1536)).toBe('1.5 KiB');
    expect(fmtBytes(100)).toBe('100 B');
  });
});
