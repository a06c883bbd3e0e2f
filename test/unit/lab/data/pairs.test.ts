import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { detectPairsFiles, readPairs, splitLines } from '../../../../src/lab/data/pairs';

let dir = '';

/**
 * A folder laid out as Multi30k ships (train/val/test_2016_flickr, one .de and one .en line
 * file each, line i of one the translation of line i of the other), written by the test:
 * German with umlauts and ß, a CRLF file, and a last line without a newline.
 */
function multi30kShaped(root: string, counts: { train: number; val: number; test: number }): string {
  const de = ['Zwei junge Männer stehen draußen.', 'Ein Hund läuft über die grüne Wiese.', 'Eine Frau in einem roten Mantel liest ein Buch.', 'Kinder spielen im Schnee, während es dämmert.'];
  const en = ['Two young men are standing outside.', 'A dog runs across the green meadow.', 'A woman in a red coat is reading a book.', 'Children play in the snow as dusk falls.'];
  const lines = (from: readonly string[], n: number, tag: string): string[] => Array.from({ length: n }, (_, i) => `${from[i % from.length]} (${tag} ${i + 1})`);
  for (const [split, n] of [['train', counts.train], ['val', counts.val], ['test_2016_flickr', counts.test]] as const) {
    put(`${root}/${split}.de`, lines(de, n, split).join(split === 'val' ? '\r\n' : '\n') + (split === 'test_2016_flickr' ? '' : '\n'));
    put(`${root}/${split}.en`, lines(en, n, split).join('\n') + '\n');
  }
  put(`${root}/README.md`, 'Multi30k-shaped fixture\n');
  return path.join(dir, root);
}

function put(rel: string, data: string | Uint8Array): string {
  const abs = path.join(dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, data);
  return abs;
}

async function message(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (EngineError.is(e, 'input/invalid')) return e.message;
    throw e;
  }
  throw new Error('expected an EngineError');
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'al-pairs-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('splitLines', () => {
  it('splits LF and CRLF and drops trailing blank lines only', () => {
    expect(splitLines('a\r\nb\nc\r\n\r\n\n')).toEqual(['a', 'b', 'c']);
    expect(splitLines('a\n\nb')).toEqual(['a', '', 'b']);
    expect(splitLines('a\rb')).toEqual(['a\rb']);
  });
});

describe('readPairs: parallel line files', () => {
  it('pairs line i with line i, with CRLF and a trailing blank line', async () => {
    const s = put('p/train.src', 'hallo welt\r\nguten tag\r\n');
    const t = put('p/train.tgt', 'hello world\ngood day\n\n');
    expect(await readPairs(s, t)).toEqual([
      { src: 'hallo welt', tgt: 'hello world' },
      { src: 'guten tag', tgt: 'good day' },
    ]);
  });

  it('names both counts and both paths when line counts differ', async () => {
    const s = put('m/a.de', 'eins\nzwei\ndrei\n');
    const t = put('m/a.en', 'one\ntwo\n');
    expect(await message(readPairs(s, t))).toBe(
      `The pairs files have different line counts: ${s} has 3, ${t} has 2; line i of the source must translate line i of the target.`,
    );
  });

  it('rejects a blank line inside a file, naming it', async () => {
    const s = put('b/a.de', 'eins\n\ndrei\n');
    const t = put('b/a.en', 'one\ntwo\nthree\n');
    expect(await message(readPairs(s, t))).toMatch(new RegExp(`^Line 2 of ${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has an empty source`));
  });

  it('gives clear errors for missing, empty, folder, binary and non-UTF-8 files', async () => {
    const ok = put('e/ok.en', 'one\n');
    expect(await message(readPairs(path.join(dir, 'e/missing.de'), ok))).toMatch(/source file .*missing\.de does not exist; check the path/);
    expect(await message(readPairs(ok, put('e/empty.de', '\n\n')))).toMatch(/target file .*empty\.de is empty/);
    expect(await message(readPairs(path.join(dir, 'e'), ok))).toMatch(/is a folder/);
    expect(await message(readPairs(put('e/bin.de', new Uint8Array([1, 0, 2])), ok))).toMatch(/looks binary/);
    const latin1 = put('e/latin1.de', new Uint8Array([0x6f, 0x6b, 0x0a, 0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(await message(readPairs(latin1, ok))).toMatch(/latin1\.de is not valid UTF-8 \(line 2\); save it as UTF-8/);
  });
});

describe('readPairs: .tsv', () => {
  it('reads SOURCE<TAB>TARGET lines', async () => {
    const f = put('t/data.tsv', 'abc\tcba\r\nxy z\tz yx\n');
    expect(await readPairs(f, null)).toEqual([
      { src: 'abc', tgt: 'cba' },
      { src: 'xy z', tgt: 'z yx' },
    ]);
  });

  it('names the line and what it found when the tab count is wrong', async () => {
    const none = put('t/none.tsv', 'a\tb\nno tab here\n');
    expect(await message(readPairs(none, null))).toBe(
      `Line 2 of ${none} has no tab; each line must be SOURCE<TAB>TARGET with exactly one tab.`,
    );
    const two = put('t/two.tsv', 'a\tb\tc\n');
    expect(await message(readPairs(two, null))).toMatch(/^Line 1 of .*two\.tsv has 2 tabs; each line must be SOURCE<TAB>TARGET/);
    expect(await message(readPairs(put('t/emptyside.tsv', 'a\t\n'), null))).toMatch(/Line 1 of .* has an empty target/);
  });

  it('asks for .tsv or .jsonl when one file of another kind is given', async () => {
    expect(await message(readPairs(put('t/data.csv', 'a,b\n'), null))).toMatch(/must end in \.tsv .* or \.jsonl .*give both: SRC TGT/);
  });
});

describe('readPairs: .jsonl', () => {
  it('reads objects with string src and tgt (extra fields allowed)', async () => {
    const f = put('j/data.jsonl', '{"src":"1+1","tgt":"2","id":7}\n{"tgt":"é\\t","src":"x"}\n\n');
    expect(await readPairs(f, null)).toEqual([
      { src: '1+1', tgt: '2' },
      { src: 'x', tgt: 'é\t' },
    ]);
  });

  it('names the line and the problem', async () => {
    const cases: [string, RegExp][] = [
      ['{"src":"a","tgt":"b"}\n{"src":"a",\n', /^Line 2 of .* is not valid JSON \(.*\); each line must be one object/],
      ['["a","b"]\n', /^Line 1 of .* is an array, not an object/],
      ['{"src":"a"}\n', /^Line 1 of .* has no "tgt" field/],
      ['{"src":3,"tgt":"b"}\n', /^Line 1 of .*: "src" is a number; it must be a string/],
      ['{"src":"a","tgt":null}\n', /^Line 1 of .*: "tgt" is null; it must be a string/],
      ['{"src":"a","tgt":"b"}\n\n{"src":"c","tgt":"d"}\n', /^Line 2 of .* is blank/],
    ];
    for (const [i, [text, want]] of cases.entries()) {
      expect(await message(readPairs(put(`j/bad${i}.jsonl`, text), null))).toMatch(want);
    }
  });
});

describe('readPairs on a corpus laid out as Multi30k', () => {
  it('reads the validation pair of a CRLF German file and an LF English file', async () => {
    const root = multi30kShaped('m30k-read', { train: 40, val: 1014, test: 30 });
    const pairs = await readPairs(path.join(root, 'val.de'), path.join(root, 'val.en'));
    expect(pairs).toHaveLength(1014);
    const firstDe = readFileSync(path.join(root, 'val.de'), 'utf8').split('\r\n')[0];
    const lastEn = readFileSync(path.join(root, 'val.en'), 'utf8').trimEnd().split('\n').at(-1);
    expect(pairs[0]?.src).toBe(firstDe);
    expect(pairs[0]?.src).toBe('Zwei junge Männer stehen draußen. (val 1)');
    expect(pairs.at(-1)?.tgt).toBe(lastEn);
  });
});

describe('detectPairsFiles', () => {
  it('finds .tsv, .jsonl and X.a/X.b files with equal line counts', async () => {
    const d = path.join(dir, 'detect');
    put('detect/data.tsv', 'a\tb\n');
    put('detect/data.jsonl', '{"src":"a","tgt":"b"}\n{"src":"c","tgt":"d"}\n');
    put('detect/train.src', 'a\nb\nc\n');
    put('detect/train.tgt', 'x\ny\nz\n');
    put('detect/dev.en', 'a\nb\n');
    put('detect/dev.de', 'x\n'); // unequal: not a pair
    put('detect/README.md', 'a\nb\nc\n');
    put('detect/README.txt', 'a\nb\nc\n'); // same stem and count, but document types
    put('detect/empty.tsv', '');
    const found = await detectPairsFiles(d);
    expect(found).toEqual([
      { source: path.join(d, 'data.jsonl'), target: null, pairs: 2, label: 'data.jsonl (2 pairs)' },
      { source: path.join(d, 'data.tsv'), target: null, pairs: 1, label: 'data.tsv (1 pair)' },
      { source: path.join(d, 'train.src'), target: path.join(d, 'train.tgt'), pairs: 3, label: 'train.src → train.tgt (3 pairs)' },
    ]);
    expect(await detectPairsFiles(path.join(dir, 'no-such-folder'))).toEqual([]);
  });

  it('finds the splits of a corpus laid out as Multi30k, a final line without a newline included', async () => {
    const root = multi30kShaped('m30k-detect', { train: 2900, val: 101, test: 100 });
    const found = await detectPairsFiles(root);
    expect(found.map((c) => c.label)).toEqual([
      'test_2016_flickr.de → test_2016_flickr.en (100 pairs)',
      'train.de → train.en (2900 pairs)',
      'val.de → val.en (101 pairs)',
    ]);
    expect(found[1]?.target).toBe(path.join(root, 'train.en'));
  });
});
