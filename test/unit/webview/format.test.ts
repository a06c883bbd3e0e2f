import { describe, expect, it } from 'vitest';
import { isPadToken, showToken } from '../../../webview/format';

describe('format', () => {
  it('makes whitespace in tokens visible', () => {
    expect(showToken('a b\n')).toBe('a␣b↵');
    expect(showToken('')).toBe('∅');
    expect(isPadToken('<pad>')).toBe(true);
    expect(isPadToken('pad')).toBe(false);
  });
});
