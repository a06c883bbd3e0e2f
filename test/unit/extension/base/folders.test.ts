import { describe, expect, it } from 'vitest';
import { commonFolder, isInside } from '../../../../src/extension/base/folders';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';
import { NODE_FS } from '../../../../src/lab/files/fs.node';

const mem = new MemoryFs();

describe('folders', () => {
  it('knows what lies inside a folder', () => {
    expect(isInside(NODE_FS, '/w', '/w/a/b.txt')).toBe(true);
    expect(isInside(NODE_FS, '/w', '/w')).toBe(true);
    expect(isInside(NODE_FS, '/w', '/w2/a')).toBe(false);
    expect(isInside(NODE_FS, '/w', '/')).toBe(false);
    expect(isInside(NODE_FS, '/w/a', '/w/a/../b')).toBe(false);
  });

  it('finds the deepest common folder of files', () => {
    expect(commonFolder(NODE_FS, ['/w/a/x.txt', '/w/a/b/y.txt'])).toBe('/w/a');
    expect(commonFolder(NODE_FS, ['/w/a/x.txt', '/w/c/y.txt'])).toBe('/w');
    expect(commonFolder(NODE_FS, ['/a/x', '/b/y'])).toBe('/');
    expect(commonFolder(NODE_FS, ['/w/one.txt'])).toBe('/w');
  });

  it('works on URIs too (the web host spells paths so)', () => {
    expect(isInside(mem, 'vscode-vfs://github/o/r', 'vscode-vfs://github/o/r/docs/a.md')).toBe(true);
    expect(isInside(mem, 'vscode-vfs://github/o/r', 'vscode-vfs://github/o/rr/a.md')).toBe(false);
    expect(commonFolder(mem, ['vscode-vfs://github/o/r/a/x.md', 'vscode-vfs://github/o/r/b/y.md'])).toBe(
      'vscode-vfs://github/o/r',
    );
    expect(commonFolder(mem, ['vscode-vfs://github/o/r/x.md', 'file:///w/y.md'])).toBe('vscode-vfs://github/');
  });
});
