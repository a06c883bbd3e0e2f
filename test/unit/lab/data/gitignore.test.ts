import { beforeEach, describe, expect, it } from 'vitest';
import { GitignoreFilter } from '../../../../src/lab/data/gitignore';
import { FILE_SYSTEMS } from '../files/fileSystems';

describe.each(FILE_SYSTEMS)('GitignoreFilter on $name', ({ make }) => {
  const t = make();
  let dir = '';
  const put = async (rel: string, text = 'x\n'): Promise<string> => (await t.put(dir, { [rel]: text }))[0] as string;
  beforeEach(async () => {
    dir = await t.dir();
  });

  it('applies the root .gitignore, with folder rules and negation', async () => {
    await put('.gitignore', '*.log\n!keep.log\nbuild/\n/only-root.txt\n');
    const f = new GitignoreFilter(t.fs, dir);
    expect(await f.isIgnored(await put('a.log'))).toBe(true);
    expect(await f.isIgnored(await put('keep.log'))).toBe(false);
    expect(await f.isIgnored(await put('build/out/x.txt'))).toBe(true);
    expect(await f.isIgnored(await put('only-root.txt'))).toBe(true);
    expect(await f.isIgnored(await put('sub/only-root.txt'))).toBe(false);
    expect(await f.isIgnored(await put('notes.md'))).toBe(false);
  });

  it('lets a deeper .gitignore override a shallower one', async () => {
    await put('.gitignore', '*.tmp\n');
    await put('sub/.gitignore', '!wanted.tmp\n*.md\n');
    const f = new GitignoreFilter(t.fs, dir);
    expect(await f.isIgnored(await put('sub/wanted.tmp'))).toBe(false);
    expect(await f.isIgnored(await put('sub/other.tmp'))).toBe(true);
    expect(await f.isIgnored(await put('sub/deep/readme.md'))).toBe(true); // nested rules apply below their folder
    expect(await f.isIgnored(await put('readme.md'))).toBe(false); // …but not above it
  });

  it('cannot re-include a file whose folder is ignored (as git)', async () => {
    await put('.gitignore', 'vendor/\n');
    await put('vendor/.gitignore', '!keep.txt\n');
    const f = new GitignoreFilter(t.fs, dir);
    expect(await f.isIgnored(await put('vendor/keep.txt'))).toBe(true);
  });

  it('reads .git/info/exclude at the repository root and finds the root above the corpus folder', async () => {
    await put('.git/info/exclude', 'secret.md\n');
    await put('.git/HEAD', 'ref: refs/heads/main\n');
    await put('.gitignore', 'drafts/\n');
    const f = new GitignoreFilter(t.fs, t.fs.join(dir, 'docs')); // corpus root below the repository root
    expect(await f.isIgnored(await put('docs/secret.md'))).toBe(true);
    expect(await f.isIgnored(await put('docs/drafts/a.md'))).toBe(true);
    expect(await f.isIgnored(await put('docs/ok.md'))).toBe(false);
    expect(await f.isIgnored(t.fs.join(dir, '.git', 'HEAD'))).toBe(true);
  });

  it('always leaves out node_modules and .git, even without rules', async () => {
    const f = new GitignoreFilter(t.fs, dir);
    expect(await f.isIgnored(await put('node_modules/pkg/readme.md'))).toBe(true);
    expect(await f.isIgnored(await put('a/node_modules/b.txt'))).toBe(true);
    expect(await f.isIgnored(await put('a/.git/config'))).toBe(true);
    expect(await f.isIgnored(await put('a/node_modules_not/b.txt'))).toBe(false);
  });
});
