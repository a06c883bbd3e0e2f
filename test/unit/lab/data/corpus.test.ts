import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { collectFromPaths, splitDocuments } from '../../../../src/lab/data/corpus';
import { collectDocuments } from '../../../../src/lab/data/globFiles.node';
import { FILE_SYSTEMS } from '../files/fileSystems';
import { shownPath } from '../../../../src/lab/files/slashPaths';

let dir = '';

function put(rel: string, data: string | Uint8Array): string {
  const abs = path.join(dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, data);
  return abs;
}

async function rejection(p: Promise<unknown>): Promise<EngineError> {
  try {
    await p;
  } catch (e) {
    if (EngineError.is(e, 'input/invalid')) return e;
    throw e;
  }
  throw new Error('expected an EngineError');
}

/** The corpus folder every test reads. */
const FILES: Readonly<Record<string, string | Uint8Array>> = {
  'a.md': '# Title\nhello\n',
  'crlf.txt': 'one\r\ntwo\r\n',
  'bom.txt': new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]),
  'docs/guide.md': 'guide text',
  'docs/deep/more.md': 'more text',
  'image.png': 'not really a png but the extension says binary',
  'nul.txt': new Uint8Array([0x61, 0x00, 0x62]),
  'latin1.txt': new Uint8Array([0x63, 0x61, 0x66, 0xe9]), // "café" in Latin-1
  'big.txt': 'x'.repeat(5000),
  'empty.txt': '',
  'blank.txt': '  \n\t\n',
  '.gitignore': 'ignored.txt\nbuild/\n',
  'ignored.txt': 'ignored text',
  'build/out.txt': 'build output',
  'nested/.gitignore': '*.log\n',
  'nested/x.log': 'log text',
  'nested/keep.md': 'kept',
  'node_modules/pkg/readme.md': 'dependency docs',
  '.hidden/secret.md': 'dot folders are not globbed',
};

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'al-corpus-'));
  for (const [name, data] of Object.entries(FILES)) put(name, data);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('collectDocuments', () => {
  it('keeps UTF-8 text and reports every skipped file with its reason, sorted by path', async () => {
    const c = await collectDocuments(['**/*'], { cwd: dir, maxFileBytes: 1000 });
    expect(c.root).toBe(path.resolve(dir));
    expect(c.documents.map((d) => d.path)).toEqual([
      'a.md',
      'bom.txt',
      'crlf.txt',
      'docs/deep/more.md',
      'docs/guide.md',
      'nested/keep.md',
    ]);
    expect(c.skipped).toEqual([
      { path: 'big.txt', reason: 'too-large', bytes: 5000 },
      { path: 'blank.txt', reason: 'empty' },
      { path: 'build/out.txt', reason: 'ignored' },
      { path: 'empty.txt', reason: 'empty' },
      { path: 'ignored.txt', reason: 'ignored' },
      { path: 'image.png', reason: 'binary' },
      { path: 'latin1.txt', reason: 'not-utf8' },
      { path: 'nested/x.log', reason: 'ignored' },
      { path: 'nul.txt', reason: 'binary' },
    ]);
    const text = Object.fromEntries(c.documents.map((d) => [d.path, d.text]));
    expect(text['crlf.txt']).toBe('one\ntwo\n');
    expect(text['bom.txt']).toBe('hi');
    expect(c.bytes).toBe(14 + 5 + 10 + 9 + 10 + 4); // file sizes, BOM and CR bytes included
  });

  it('is deterministic', async () => {
    const a = await collectDocuments(['**/*.md', '*.txt'], { cwd: dir, maxFileBytes: 1000 });
    const b = await collectDocuments(['*.txt', '**/*.md'], { cwd: dir, maxFileBytes: 1000 });
    expect(b).toEqual(a);
  });

  it('takes plain file and folder paths (a folder means everything under it), relative or absolute', async () => {
    const c = await collectDocuments(['docs', 'a.md', path.join(dir, 'nested')], { cwd: dir });
    expect(c.documents.map((d) => d.path)).toEqual(['a.md', 'docs/deep/more.md', 'docs/guide.md', 'nested/keep.md']);
    expect(c.skipped).toEqual([{ path: 'nested/x.log', reason: 'ignored' }]);
  });

  it('stops at the total budget in path order', async () => {
    // a.md 14, bom.txt 5, crlf.txt 10: the budget 20 keeps a.md and bom.txt, then crlf.txt would pass it.
    const c = await collectDocuments(['a.md', 'bom.txt', 'crlf.txt'], { cwd: dir, maxTotalBytes: 20 });
    expect(c.documents.map((d) => d.path)).toEqual(['a.md', 'bom.txt']);
    expect(c.skipped).toEqual([{ path: 'crlf.txt', reason: 'over-total', bytes: 10 }]);
    expect(c.bytes).toBe(19);
  });

  it('never reads node_modules or .git, and leaves dot folders to explicit patterns', async () => {
    const c = await collectDocuments(['**/*.md'], { cwd: dir });
    expect(c.documents.some((d) => d.path.includes('node_modules') || d.path.includes('.hidden'))).toBe(false);
    expect(c.skipped.some((d) => d.path.includes('node_modules'))).toBe(false);
    const hidden = await collectDocuments(['.hidden/*.md'], { cwd: dir });
    expect(hidden.documents.map((d) => d.path)).toEqual(['.hidden/secret.md']);
  });

  it('says when no file matches, naming the pattern and the folder', async () => {
    const e = await rejection(collectDocuments(['nope/**/*.md'], { cwd: dir }));
    expect(e.message).toBe(
      `No files match "nope/**/*.md" (relative to ${path.resolve(dir)}); check the pattern or quote it so your shell does not expand it. ` +
        '(.git/ and node_modules/ are always left out.)',
    );
    expect((await rejection(collectDocuments(['node_modules/**'], { cwd: dir }))).message).toMatch(/^No files match/);
    expect((await rejection(collectDocuments([], { cwd: dir }))).message).toMatch(/No data patterns/);
  });

  it('lists the counts per reason when every file is skipped', async () => {
    const e = await rejection(
      collectDocuments(['empty.txt', 'blank.txt', 'nul.txt', 'latin1.txt', 'ignored.txt'], { cwd: dir }),
    );
    expect(e.message).toMatch(/^All 5 files matching .* were skipped \(/);
    for (const part of ['2 empty', '1 binary', '1 not UTF-8', '1 ignored by .gitignore'])
      expect(e.message).toContain(part);
  });

  it('rejects nonsense limits', async () => {
    expect((await rejection(collectDocuments(['a.md'], { cwd: dir, maxFileBytes: 0 }))).message).toMatch(
      /maxFileBytes must be/,
    );
  });
});

describe.each(FILE_SYSTEMS)('collectFromPaths on $name', ({ make }) => {
  const t = make();
  let root = '';
  beforeAll(async () => {
    root = await t.dir();
    await t.put(root, FILES);
  });

  it('applies the same filters to given paths, without globbing', async () => {
    const paths = ['a.md', 'node_modules/pkg/readme.md', 'ignored.txt', 'missing.md', 'image.png', 'docs/guide.md'].map(
      (p) => t.fs.join(root, p),
    );
    const c = await collectFromPaths(t.fs, [...paths, t.fs.join(root, 'a.md'), 'crlf.txt'], root);
    expect(c.documents.map((d) => d.path)).toEqual(['a.md', 'crlf.txt', 'docs/guide.md']);
    expect(c.documents[1]?.text).toBe('one\ntwo\n');
    expect(c.skipped).toEqual([
      { path: 'ignored.txt', reason: 'ignored' },
      { path: 'image.png', reason: 'binary' },
      { path: 'missing.md', reason: 'unreadable' },
      { path: 'node_modules/pkg/readme.md', reason: 'ignored' },
    ]);
  });

  it('errors on an empty list and when everything is skipped', async () => {
    expect((await rejection(collectFromPaths(t.fs, [], root))).message).toMatch(/No files given/);
    expect((await rejection(collectFromPaths(t.fs, ['missing.md'], root))).message).toMatch(
      /^The only file given .* was skipped \(1 unreadable\)/,
    );
  });

  it('names the folder as a person reads it in its errors (no URI root: the web host spells paths as URIs)', async () => {
    const none = (await rejection(collectFromPaths(t.fs, [], root))).message;
    const big = (await rejection(collectFromPaths(t.fs, ['a.md'], root, { maxFileBytes: 1 }))).message;
    for (const m of [none, big]) {
      expect(m).toContain(shownPath(root));
      expect(m).not.toMatch(/[a-z]+:\/\//);
    }
    expect(big).toMatch(/a\.md is \d+ B, over the 1 B limit per file/);
  });
});

describe('splitDocuments', () => {
  const docs = Array.from({ length: 200 }, (_, i) => ({ path: `notes/n${i}.md` }));

  it('holds out about the requested fraction, deterministically per seed', () => {
    const { train, val } = splitDocuments(docs, 0.2, 1);
    expect(train.length + val.length).toBe(200);
    expect(val.length).toBeGreaterThan(20);
    expect(val.length).toBeLessThan(60);
    expect(splitDocuments(docs, 0.2, 1)).toEqual({ train, val });
    expect(splitDocuments(docs, 0.2, 2).val).not.toEqual(val);
    expect(new Set([...train, ...val].map((d) => d.path)).size).toBe(200);
  });

  it('does not move other documents when one is added', () => {
    const before = splitDocuments(docs, 0.2, 3);
    const after = splitDocuments([...docs, { path: 'notes/new.md' }], 0.2, 3);
    const wasVal = new Set(before.val.map((d) => d.path));
    for (const d of docs) expect(after.val.some((v) => v.path === d.path)).toBe(wasVal.has(d.path));
  });

  it('keeps at least one training document, and one validation document when there are two', () => {
    expect(splitDocuments([{ path: 'a' }], 0.99, 0)).toEqual({ train: [{ path: 'a' }], val: [] });
    const two = splitDocuments([{ path: 'a' }, { path: 'b' }], 0, 0);
    expect([two.train.length, two.val.length]).toEqual([1, 1]);
    const most = splitDocuments(docs.slice(0, 5), 0.999, 4);
    expect(most.train.length).toBeGreaterThanOrEqual(1);
    expect(splitDocuments([], 0.1, 0)).toEqual({ train: [], val: [] });
  });

  it('rejects a fraction outside [0, 1)', () => {
    expect(() => splitDocuments(docs, 1, 0)).toThrow(/validation fraction must be in \[0, 1\)/);
    expect(() => splitDocuments(docs, Number.NaN, 0)).toThrow(EngineError);
  });
});
