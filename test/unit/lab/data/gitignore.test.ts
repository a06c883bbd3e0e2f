import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitignoreFilter } from '../../../../src/lab/data/gitignore';

let dir = '';

function put(rel: string, text = 'x\n'): string {
  const abs = path.join(dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, text);
  return abs;
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'al-gitignore-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('GitignoreFilter', () => {
  it('applies the root .gitignore, with folder rules and negation', () => {
    put('.gitignore', '*.log\n!keep.log\nbuild/\n/only-root.txt\n');
    const f = new GitignoreFilter(dir);
    expect(f.isIgnored(put('a.log'))).toBe(true);
    expect(f.isIgnored(put('keep.log'))).toBe(false);
    expect(f.isIgnored(put('build/out/x.txt'))).toBe(true);
    expect(f.isIgnored(put('only-root.txt'))).toBe(true);
    expect(f.isIgnored(put('sub/only-root.txt'))).toBe(false);
    expect(f.isIgnored(put('notes.md'))).toBe(false);
  });

  it('lets a deeper .gitignore override a shallower one', () => {
    put('.gitignore', '*.tmp\n');
    put('sub/.gitignore', '!wanted.tmp\n*.md\n');
    const f = new GitignoreFilter(dir);
    expect(f.isIgnored(put('sub/wanted.tmp'))).toBe(false);
    expect(f.isIgnored(put('sub/other.tmp'))).toBe(true);
    expect(f.isIgnored(put('sub/deep/readme.md'))).toBe(true); // nested rules apply below their folder
    expect(f.isIgnored(put('readme.md'))).toBe(false); // …but not above it
  });

  it('cannot re-include a file whose folder is ignored (as git)', () => {
    put('.gitignore', 'vendor/\n');
    put('vendor/.gitignore', '!keep.txt\n');
    const f = new GitignoreFilter(dir);
    expect(f.isIgnored(put('vendor/keep.txt'))).toBe(true);
  });

  it('reads .git/info/exclude at the repository root and finds the root above the corpus folder', () => {
    put('.git/info/exclude', 'secret.md\n');
    put('.git/HEAD', 'ref: refs/heads/main\n');
    put('.gitignore', 'drafts/\n');
    const f = new GitignoreFilter(path.join(dir, 'docs')); // corpus root below the repository root
    expect(f.isIgnored(put('docs/secret.md'))).toBe(true);
    expect(f.isIgnored(put('docs/drafts/a.md'))).toBe(true);
    expect(f.isIgnored(put('docs/ok.md'))).toBe(false);
    expect(f.isIgnored(path.join(dir, '.git', 'HEAD'))).toBe(true);
  });

  it('always leaves out node_modules and .git, even without rules', () => {
    const f = new GitignoreFilter(dir);
    expect(f.isIgnored(put('node_modules/pkg/readme.md'))).toBe(true);
    expect(f.isIgnored(put('a/node_modules/b.txt'))).toBe(true);
    expect(f.isIgnored(put('a/.git/config'))).toBe(true);
    expect(f.isIgnored(put('a/node_modules_not/b.txt'))).toBe(false);
  });
});
