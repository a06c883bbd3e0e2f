import { describe, expect, it } from 'vitest';
import { isPadToken, showToken } from '../../../../webview/base/format';

describe('format', () => {
  it('shows tokens as the engine rendered them, the empty token as ∅', () => {
    expect(showToken('a·b↵')).toBe('a·b↵');
    expect(showToken('')).toBe('∅');
    expect(isPadToken('<pad>')).toBe(true);
    expect(isPadToken('pad')).toBe(false);
  });
});
