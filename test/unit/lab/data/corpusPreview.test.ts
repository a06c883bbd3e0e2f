import { beforeAll, describe, expect, it } from 'vitest';
import { planCorpus } from '../../../../src/lab/data/corpus';
import { PreviewCancelled, previewCorpus as preview } from '../../../../src/lab/data/corpusPreview';
import type { PreviewBudget } from '../../../../src/lab/data/corpusPreview';
import { FILE_SYSTEMS } from '../files/fileSystems';

describe.each(FILE_SYSTEMS)('previewCorpus on $name', ({ make }) => {
  const t = make();
  let dir = '';
  let files: string[] = [];
  const limits = { maxFileBytes: 8192 };
  const previewCorpus = (
    f: readonly string[],
    root: string,
    l: typeof limits,
    budget: PreviewBudget = {},
    signal?: AbortSignal,
  ): ReturnType<typeof preview> => preview(t.fs, f, root, l, budget, signal);

  beforeAll(async () => {
    dir = await t.dir();
    await t.put(dir, { '.gitignore': 'build/\n' });
    files = await t.put(dir, {
      'a.md': 'abc\n',
      'b.txt': 'bcd é\n',
      'package-lock.json': '{}\n',
      'app.js': `var x=${'1+'.repeat(3000)}1;`, // one 6 KB line: minified
      'big.txt': 'x'.repeat(9000), // over the 8 KB per-file limit below
      'empty.txt': '   \n',
      'build/out.txt': 'ignored\n',
      'z.txt': 'zz😀\n',
    });
  });

  it('plans the files as training does, then finds the content skips and the characters', async () => {
    const p = await previewCorpus(files, dir, limits);
    const plan = await planCorpus(t.fs, files, dir, limits);
    // Every skip the plan makes is in the preview, with the same reason.
    for (const s of plan.skipped) expect(p.skipped).toContainEqual(s);
    expect(p.skipped.map((s) => `${s.path}:${s.reason}`)).toEqual([
      'app.js:minified',
      'big.txt:too-large',
      'build/out.txt:ignored',
      'empty.txt:empty',
      'package-lock.json:lockfile',
    ]);
    expect(p.files.map((f) => f.path)).toEqual(['a.md', 'b.txt', 'z.txt']);
    expect(p.bytes).toBe(4 + Buffer.byteLength('bcd é\n') + Buffer.byteLength('zz😀\n'));
    expect(p.read).toBe(p.planned);
    expect(p.planned).toBe(plan.files.length);
    // a b c d z é 😀 space newline (the emoji is one code point, not two surrogates)
    expect(p.distinctChars).toBe(9);
  });

  it('reads only within its budget and keeps the unread files as planned', async () => {
    const p = await previewCorpus(files, dir, limits, { maxFiles: 1 });
    expect(p.read).toBe(1);
    expect(p.planned).toBe(5);
    // Only a.md was read: the unread app.js and empty.txt are still listed as files to train on.
    expect(p.files.map((f) => f.path)).toEqual(['a.md', 'app.js', 'b.txt', 'empty.txt', 'z.txt']);
    expect(p.distinctChars).toBe(4);
    const none = await previewCorpus(files, dir, limits, { maxBytes: 1 });
    expect(none.read).toBe(0);
    // Files over maxFileBytes are listed unread; the small ones after them are still read.
    const small = await previewCorpus(files, dir, limits, { maxFileBytes: 6 });
    expect(small.read).toBe(2); // a.md and empty.txt; app.js, b.txt and z.txt (7 bytes and more) are not read
    expect(small.skipped.map((s) => s.reason)).toContain('empty');
    expect(small.skipped.map((s) => s.reason)).not.toContain('minified');
  });

  it('lists no binary file as one to train on, even one too large to read whole', async () => {
    const bin = await t.dir();
    // 300 KB with NUL bytes and no binary extension: over the 256 KiB a preview reads, under the per-file limit.
    const data = new Uint8Array(300_000).fill(0x41);
    data[100] = 0;
    const found = await t.put(bin, { 'weights.dat': data, 'notes.txt': 'words\n' });
    const p = await preview(t.fs, found, bin, { maxFileBytes: 1 << 20 });
    expect(p.files.map((f) => f.path)).toEqual(['notes.txt']);
    expect(p.skipped).toEqual([{ path: 'weights.dat', reason: 'binary' }]);
    // Past the reading budget too.
    const late = await preview(t.fs, found, bin, { maxFileBytes: 1 << 20 }, { maxFiles: 0 });
    expect(late.files.map((f) => f.path)).toEqual(['notes.txt']);
    expect(late.skipped).toEqual([{ path: 'weights.dat', reason: 'binary' }]);
  });

  it('leaves a file over maxSniffFileBytes unread and unchecked (a whole-file file system reads it all)', async () => {
    const bin = await t.dir();
    const data = new Uint8Array(300_000).fill(0x41);
    data[100] = 0;
    const found = await t.put(bin, { 'weights.dat': data, 'small.dat': data.subarray(0, 200), 'notes.txt': 'words\n' });
    const reads: string[] = [];
    const counting = new Proxy(t.fs, {
      get(target, key) {
        const v = Reflect.get(target, key, target) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          if (key === 'readFile' || key === 'readRange') reads.push(t.fs.basename(args[0] as string));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const p = await preview(counting, found, bin, { maxFileBytes: 1 << 20 }, { maxFiles: 0, maxSniffFileBytes: 1000 });
    expect(reads).not.toContain('weights.dat');
    expect(reads).toContain('small.dat'); // under the bound: its start is still checked
    expect(p.files.map((f) => f.path)).toEqual(['notes.txt', 'weights.dat']);
    expect(p.skipped).toEqual([{ path: 'small.dat', reason: 'binary' }]);
    expect(p.read).toBe(0);
  });

  it('stops when cancelled', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(previewCorpus(files, dir, limits, {}, abort.signal)).rejects.toBeInstanceOf(PreviewCancelled);
  });
});
