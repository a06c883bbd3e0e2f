import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCorpus } from '../../../../src/lab/data/corpus';
import { PreviewCancelled, previewCorpus } from '../../../../src/lab/data/corpusPreview';

let dir = '';
const files: string[] = [];

function put(rel: string, data: string | Uint8Array): void {
  const abs = path.join(dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, data);
  files.push(abs);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'al-preview-'));
  writeFileSync(path.join(dir, '.gitignore'), 'build/\n');
  put('a.md', 'abc\n');
  put('b.txt', 'bcd é\n');
  put('package-lock.json', '{}\n');
  put('app.js', `var x=${'1+'.repeat(3000)}1;`); // one 6 KB line: minified
  put('big.txt', 'x'.repeat(9000)); // over the 8 KB per-file limit below
  put('empty.txt', '   \n');
  put('build/out.txt', 'ignored\n');
  put('z.txt', 'zz😀\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('previewCorpus', () => {
  const limits = { maxFileBytes: 8192 };

  it('plans the files as training does, then finds the content skips and the characters', async () => {
    const p = await previewCorpus(files, dir, limits);
    const plan = await planCorpus(files, dir, limits);
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

  it('stops when cancelled', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(previewCorpus(files, dir, limits, {}, abort.signal)).rejects.toBeInstanceOf(PreviewCancelled);
  });
});
