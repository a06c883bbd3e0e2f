import { describe, expect, it } from 'vitest';
import {
  evalLogLines,
  evalSummary,
  isPairsFile,
  otherSides,
  testDataOf,
} from '../../../../src/extension/commands/evalFiles';
import { detectPairsFiles } from '../../../../src/lab/data/pairs';
import { writeFile } from '../../../../src/lab/files/labFs';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { DOCS_OUTPUT as docs, PAIRS_OUTPUT as pairs } from '../../../evalOutputs';

describe('testDataOf', () => {
  it('takes any files as documents for a decoder-only run, relative to the workspace or the first file’s folder', () => {
    expect(testDataOf(NODE_FS, 'decoder-only', ['/w/a.md', '/w/b.txt'], '/w')).toEqual({
      kind: 'documents',
      paths: ['/w/a.md', '/w/b.txt'],
      cwd: '/w',
      glob: false,
    });
    expect(testDataOf(NODE_FS, 'decoder-only', ['/x/y/a.md'], null)).toMatchObject({ cwd: '/x/y' });
  });

  it('takes one .tsv / .jsonl file or a source and a target line file for an encoder-decoder', () => {
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/w/t.TSV'], '/w')).toEqual({
      kind: 'pairs',
      source: '/w/t.TSV',
      target: null,
    });
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/w/t.de', '/w/t.en'], '/w')).toEqual({
      kind: 'pairs',
      source: '/w/t.de',
      target: '/w/t.en',
    });
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/w/t.de'], '/w')).toEqual({
      error: expect.stringMatching(
        /t\.de is not a \.tsv or \.jsonl file; choose one of those, or a source line file and then its target/,
      ),
    });
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/a', '/b', '/c'], '/w')).toEqual({
      error: expect.stringMatching(/not 3 files/),
    });
    expect(testDataOf(NODE_FS, 'decoder-only', [], '/w')).toEqual({ error: 'Choose at least one test file.' });
    expect([isPairsFile('a.jsonl'), isPairsFile('a.tsv.bak'), isPairsFile('a.txt')]).toEqual([true, false, false]);
  });
});

describe('the result, for people', () => {
  it('one line for the notification', () => {
    expect(evalSummary(pairs)).toBe(
      'loss 1.2346 · 1.9981 bits/byte · perplexity 3.44 · exact match 12.5% · BLEU 23.46 (nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0) · chrF 45.68 · greedy · 1,234 tokens · 1 too long',
    );
    expect(evalSummary(docs)).toBe(
      'loss 1.2346 · 1.9981 bits/byte · perplexity 3.44 · 1,234 tokens · 1 file skipped · 3 unseen characters',
    );
  });

  it('lines for the log', () => {
    expect(evalLogLines(pairs)).toEqual([
      'Evaluated step 400 on /w/test.tsv (41 pairs) (context 24 tokens)',
      '  loss 1.2346 nats/token · 1.9981 bits/byte (1,100 bytes) · perplexity 3.44 · 1,234 tokens',
      '  40 pairs scored, 1 longer than the context left out',
      '  exact match 12.5% · BLEU 23.46 · chrF 45.68 (greedy decodes of every pair)',
      '  BLEU: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 — sacreBLEU’s default',
      '  chrF: nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0',
      `  recorded in the run's evaluations.jsonl (test data ${'cd'.repeat(6)}…)`,
    ]);
    const beam = {
      ...pairs,
      translation: {
        ...(pairs.translation as NonNullable<typeof pairs.translation>),
        decoded: 10,
        decoding: { strategy: 'beam' as const, beam: 4, lengthPenalty: 0.6 },
      },
    };
    expect(evalLogLines(beam)[3]).toMatch(
      /\(beam search \(beam 4, length penalty 0\.6\) decodes of the first 10 of 41 pairs\)$/,
    );
    expect(evalLogLines(docs).slice(2)).toEqual([
      '  2 documents scored',
      '  skipped 1 (1 binary): img.png',
      '  3 of 900 characters never occur in the training data (e.g. "é", "\\n")',
      `  recorded in the run's evaluations.jsonl (test data ${'cd'.repeat(6)}…)`,
    ]);
  });
});

describe('otherSides', () => {
  it('offers test.ja beside test.en (and test.en beside test.ja), not the training files', async () => {
    const fs = new MemoryFs();
    await fs.mkdir('/w');
    for (const [name, text] of [
      ['test.en', 'a\nb\n'],
      ['test.ja', 'x\ny\n'],
      ['train.en', 'a\nb\nc\n'],
      ['train.ja', 'x\ny\nz\n'],
      ['notes.tsv', 'a\tb\n'],
    ])
      await writeFile(fs, `/w/${name}`, text as string);
    const found = await detectPairsFiles(fs, '/w');
    expect(otherSides(found, '/w/test.en')).toEqual([{ file: '/w/test.ja', pairs: 2 }]);
    expect(otherSides(found, '/w/test.ja')).toEqual([{ file: '/w/test.en', pairs: 2 }]);
    expect(otherSides(found, '/w/notes.tsv')).toEqual([]);
  });
});
