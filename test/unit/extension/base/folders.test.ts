import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commonFolder, isInside } from '../../../../src/extension/base/folders';

describe('folders', () => {
  it('knows what lies inside a folder', () => {
    expect(isInside('/w', '/w/a/b.txt')).toBe(true);
    expect(isInside('/w', '/w')).toBe(true);
    expect(isInside('/w', '/w2/a')).toBe(false);
    expect(isInside('/w', '/')).toBe(false);
    expect(isInside('/w/a', '/w/a/../b')).toBe(false);
  });

  it('finds the deepest common folder of files', () => {
    expect(commonFolder(['/w/a/x.txt', '/w/a/b/y.txt'])).toBe(path.resolve('/w/a'));
    expect(commonFolder(['/w/a/x.txt', '/w/c/y.txt'])).toBe(path.resolve('/w'));
    expect(commonFolder(['/a/x', '/b/y'])).toBe('/');
    expect(commonFolder(['/w/one.txt'])).toBe('/w');
  });
});
