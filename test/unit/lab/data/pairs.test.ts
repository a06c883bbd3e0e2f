import { beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { detectPairsFiles, readPairs, splitLines } from '../../../../src/lab/data/pairs';
import { readText } from '../../../../src/lab/files/labFs';
import type { TestFs } from '../files/fileSystems';
import { FILE_SYSTEMS } from '../files/fileSystems';

/**
 * A folder laid out as Multi30k ships (train/val/test_2016_flickr, one .de and one .en line
 * file each, line i of one the translation of line i of the other), written by the test:
 * German with umlauts and ß, a CRLF file, and a last line without a newline.
 */
async function multi30kShaped(
  tfs: TestFs,
  dir: string,
  root: string,
  counts: { train: number; val: number; test: number },
): Promise<string> {
  const de = [
    'Zwei junge Männer stehen draußen.',
    'Ein Hund läuft über die grüne Wiese.',
    'Eine Frau in einem roten Mantel liest ein Buch.',
    'Kinder spielen im Schnee, während es dämmert.',
  ];
  const en = [
    'Two young men are standing outside.',
    'A dog runs across the green meadow.',
    'A woman in a red coat is reading a book.',
    'Children play in the snow as dusk falls.',
  ];
  const lines = (from: readonly string[], n: number, tag: string): string[] =>
    Array.from({ length: n }, (_, i) => `${from[i % from.length]} (${tag} ${i + 1})`);
  for (const [split, n] of [
    ['train', counts.train],
    ['val', counts.val],
    ['test_2016_flickr', counts.test],
  ] as const) {
    await tfs.put(dir, {
      [`${root}/${split}.de`]:
        lines(de, n, split).join(split === 'val' ? '\r\n' : '\n') + (split === 'test_2016_flickr' ? '' : '\n'),
      [`${root}/${split}.en`]: lines(en, n, split).join('\n') + '\n',
    });
  }
  await tfs.put(dir, { [`${root}/README.md`]: 'Multi30k-shaped fixture\n' });
  return tfs.fs.join(dir, root);
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

describe('splitLines', () => {
  it('splits LF and CRLF and drops trailing blank lines only', () => {
    expect(splitLines('a\r\nb\nc\r\n\r\n\n')).toEqual(['a', 'b', 'c']);
    expect(splitLines('a\n\nb')).toEqual(['a', '', 'b']);
    expect(splitLines('a\rb')).toEqual(['a\rb']);
  });
});

describe.each(FILE_SYSTEMS)('pairs files on $name', ({ make }) => {
  const tfs = make();
  let dir = '';
  const put = async (rel: string, data: string | Uint8Array): Promise<string> =>
    (await tfs.put(dir, { [rel]: data }))[0] as string;
  beforeAll(async () => {
    dir = await tfs.dir();
  });

  describe('readPairs: parallel line files', () => {
    it('pairs line i with line i, with CRLF and a trailing blank line', async () => {
      const s = await put('p/train.src', 'hallo welt\r\nguten tag\r\n');
      const t = await put('p/train.tgt', 'hello world\ngood day\n\n');
      expect(await readPairs(tfs.fs, s, t)).toEqual([
        { src: 'hallo welt', tgt: 'hello world' },
        { src: 'guten tag', tgt: 'good day' },
      ]);
    });

    it('names both counts and both paths when line counts differ', async () => {
      const s = await put('m/a.de', 'eins\nzwei\ndrei\n');
      const t = await put('m/a.en', 'one\ntwo\n');
      expect(await message(readPairs(tfs.fs, s, t))).toBe(
        `The pairs files have different line counts: ${s} has 3, ${t} has 2; line i of the source must translate line i of the target.`,
      );
    });

    it('rejects a blank line inside a file, naming it', async () => {
      const s = await put('b/a.de', 'eins\n\ndrei\n');
      const t = await put('b/a.en', 'one\ntwo\nthree\n');
      expect(await message(readPairs(tfs.fs, s, t))).toMatch(
        new RegExp(`^Line 2 of ${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has an empty source`),
      );
    });

    it('gives clear errors for missing, empty, folder, binary and non-UTF-8 files', async () => {
      const ok = await put('e/ok.en', 'one\n');
      expect(await message(readPairs(tfs.fs, tfs.fs.join(dir, 'e/missing.de'), ok))).toMatch(
        /source file .*missing\.de does not exist; check the path/,
      );
      expect(await message(readPairs(tfs.fs, ok, await put('e/empty.de', '\n\n')))).toMatch(
        /target file .*empty\.de is empty/,
      );
      expect(await message(readPairs(tfs.fs, tfs.fs.join(dir, 'e'), ok))).toMatch(/is a folder/);
      expect(await message(readPairs(tfs.fs, await put('e/bin.de', new Uint8Array([1, 0, 2])), ok))).toMatch(
        /looks binary/,
      );
      const latin1 = await put('e/latin1.de', new Uint8Array([0x6f, 0x6b, 0x0a, 0x63, 0x61, 0x66, 0xe9, 0x0a]));
      expect(await message(readPairs(tfs.fs, latin1, ok))).toMatch(
        /latin1\.de is not valid UTF-8 \(line 2\); save it as UTF-8/,
      );
    });
  });

  describe('readPairs: .tsv', () => {
    it('reads SOURCE<TAB>TARGET lines', async () => {
      const f = await put('t/data.tsv', 'abc\tcba\r\nxy z\tz yx\n');
      expect(await readPairs(tfs.fs, f, null)).toEqual([
        { src: 'abc', tgt: 'cba' },
        { src: 'xy z', tgt: 'z yx' },
      ]);
    });

    it('names the line and what it found when the tab count is wrong', async () => {
      const none = await put('t/none.tsv', 'a\tb\nno tab here\n');
      expect(await message(readPairs(tfs.fs, none, null))).toBe(
        `Line 2 of ${none} has no tab; each line must be SOURCE<TAB>TARGET with exactly one tab.`,
      );
      const two = await put('t/two.tsv', 'a\tb\tc\n');
      expect(await message(readPairs(tfs.fs, two, null))).toMatch(
        /^Line 1 of .*two\.tsv has 2 tabs; each line must be SOURCE<TAB>TARGET/,
      );
      expect(await message(readPairs(tfs.fs, await put('t/emptyside.tsv', 'a\t\n'), null))).toMatch(
        /Line 1 of .* has an empty target/,
      );
    });

    it('asks for .tsv or .jsonl when one file of another kind is given', async () => {
      expect(await message(readPairs(tfs.fs, await put('t/data.csv', 'a,b\n'), null))).toMatch(
        /must end in \.tsv .* or \.jsonl .*give both: SRC TGT/,
      );
    });
  });

  describe('readPairs: .jsonl', () => {
    it('reads objects with string src and tgt (extra fields allowed)', async () => {
      const f = await put('j/data.jsonl', '{"src":"1+1","tgt":"2","id":7}\n{"tgt":"é\\t","src":"x"}\n\n');
      expect(await readPairs(tfs.fs, f, null)).toEqual([
        { src: '1+1', tgt: '2' },
        { src: 'x', tgt: 'é\t' },
      ]);
    });

    it('names the line and the problem', async () => {
      const cases: [string, RegExp][] = [
        [
          '{"src":"a","tgt":"b"}\n{"src":"a",\n',
          /^Line 2 of .* is not valid JSON \(.*\); each line must be one object/,
        ],
        ['["a","b"]\n', /^Line 1 of .* is an array, not an object/],
        ['{"src":"a"}\n', /^Line 1 of .* has no "tgt" field/],
        ['{"src":3,"tgt":"b"}\n', /^Line 1 of .*: "src" is a number; it must be a string/],
        ['{"src":"a","tgt":null}\n', /^Line 1 of .*: "tgt" is null; it must be a string/],
        ['{"src":"a","tgt":"b"}\n\n{"src":"c","tgt":"d"}\n', /^Line 2 of .* is blank/],
      ];
      for (const [i, [text, want]] of cases.entries()) {
        expect(await message(readPairs(tfs.fs, await put(`j/bad${i}.jsonl`, text), null))).toMatch(want);
      }
    });
  });

  describe('readPairs on a corpus laid out as Multi30k', () => {
    it('reads the validation pair of a CRLF German file and an LF English file', async () => {
      const root = await multi30kShaped(tfs, dir, 'm30k-read', { train: 40, val: 1014, test: 30 });
      const pairs = await readPairs(tfs.fs, tfs.fs.join(root, 'val.de'), tfs.fs.join(root, 'val.en'));
      expect(pairs).toHaveLength(1014);
      const firstDe = (await readText(tfs.fs, tfs.fs.join(root, 'val.de'))).split('\r\n')[0];
      const lastEn = (await readText(tfs.fs, tfs.fs.join(root, 'val.en'))).trimEnd().split('\n').at(-1);
      expect(pairs[0]?.src).toBe(firstDe);
      expect(pairs[0]?.src).toBe('Zwei junge Männer stehen draußen. (val 1)');
      expect(pairs.at(-1)?.tgt).toBe(lastEn);
    });
  });

  describe('detectPairsFiles', () => {
    it('finds .tsv, .jsonl and X.a/X.b files with equal line counts', async () => {
      const d = tfs.fs.join(dir, 'detect');
      await put('detect/data.tsv', 'a\tb\n');
      await put('detect/data.jsonl', '{"src":"a","tgt":"b"}\n{"src":"c","tgt":"d"}\n');
      await put('detect/train.src', 'a\nb\nc\n');
      await put('detect/train.tgt', 'x\ny\nz\n');
      await put('detect/dev.en', 'a\nb\n');
      await put('detect/dev.de', 'x\n'); // unequal: not a pair
      await put('detect/README.md', 'a\nb\nc\n');
      await put('detect/README.txt', 'a\nb\nc\n'); // same stem and count, but document types
      await put('detect/empty.tsv', '');
      const found = await detectPairsFiles(tfs.fs, d);
      expect(found).toEqual([
        { source: tfs.fs.join(d, 'data.jsonl'), target: null, pairs: 2, label: 'data.jsonl (2 pairs)' },
        { source: tfs.fs.join(d, 'data.tsv'), target: null, pairs: 1, label: 'data.tsv (1 pair)' },
        {
          source: tfs.fs.join(d, 'train.src'),
          target: tfs.fs.join(d, 'train.tgt'),
          pairs: 3,
          label: 'train.src → train.tgt (3 pairs)',
        },
      ]);
      expect(await detectPairsFiles(tfs.fs, tfs.fs.join(dir, 'no-such-folder'))).toEqual([]);
    });

    it('finds the splits of a corpus laid out as Multi30k, a final line without a newline included', async () => {
      const root = await multi30kShaped(tfs, dir, 'm30k-detect', { train: 2900, val: 101, test: 100 });
      const found = await detectPairsFiles(tfs.fs, root);
      // The training pairs first: a picker preselects the first candidate.
      expect(found.map((c) => c.label)).toEqual([
        'train.de → train.en (2900 pairs)',
        'test_2016_flickr.de → test_2016_flickr.en (100 pairs)',
        'val.de → val.en (101 pairs)',
      ]);
      expect(found[0]?.target).toBe(tfs.fs.join(root, 'train.en'));
    });

    it('puts the training pairs above a test split whose name sorts first (test.en → test.ja)', async () => {
      const d = tfs.fs.join(dir, 'enja');
      await put('enja/test.en', 'a\nb\n');
      await put('enja/test.ja', 'x\ny\n');
      await put('enja/train.en', 'a\nb\nc\n');
      await put('enja/train.ja', 'x\ny\nz\n');
      await put('enja/dev-set.tsv', 'a\tb\n');
      await put('enja/contest.tsv', 'a\tb\n'); // "test" inside a word is no split
      expect((await detectPairsFiles(tfs.fs, d)).map((c) => c.label)).toEqual([
        'contest.tsv (1 pair)',
        'train.en → train.ja (3 pairs)',
        'dev-set.tsv (1 pair)',
        'test.en → test.ja (2 pairs)',
      ]);
    });
  });
});
