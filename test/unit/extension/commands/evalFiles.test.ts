import { describe, expect, it } from 'vitest';
import { evalLogLines, evalSummary, isPairsFile, testDataOf } from '../../../../src/extension/commands/evalFiles';
import { NODE_FS } from '../../../../src/lab/files/nodeFs';
import type { EvalFilesOutput } from '../../../../src/protocol/modelWorker';

const pairs: EvalFilesOutput = {
  kind: 'pairs', source: '/w/test.tsv (41 pairs)', step: 400, context: 24, loss: 1.23456, ppl: Math.exp(1.23456), tokens: 1234, documents: 0, pairs: 40,
  pairsTooLong: 1, decoded: 40, exactMatch: 0.125, bleu: 23.456, skipped: [], characters: 900, unseenChars: 0, unseenExamples: [],
};
const docs: EvalFilesOutput = {
  ...pairs, kind: 'documents', source: '2 documents under /w', pairs: 0, pairsTooLong: 0, decoded: 0, documents: 2, exactMatch: null, bleu: null,
  skipped: [{ path: 'img.png', reason: 'binary' }], unseenChars: 3, unseenExamples: ['é', '\n'],
};

describe('testDataOf', () => {
  it('takes any files as documents for a decoder-only run, relative to the workspace or the first file’s folder', () => {
    expect(testDataOf(NODE_FS, 'decoder-only', ['/w/a.md', '/w/b.txt'], '/w')).toEqual({ kind: 'documents', paths: ['/w/a.md', '/w/b.txt'], cwd: '/w', glob: false });
    expect(testDataOf(NODE_FS, 'decoder-only', ['/x/y/a.md'], null)).toMatchObject({ cwd: '/x/y' });
  });

  it('takes one .tsv / .jsonl file or a source and a target line file for an encoder-decoder', () => {
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/w/t.TSV'], '/w')).toEqual({ kind: 'pairs', source: '/w/t.TSV', target: null });
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/w/t.de', '/w/t.en'], '/w')).toEqual({ kind: 'pairs', source: '/w/t.de', target: '/w/t.en' });
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/w/t.de'], '/w')).toEqual({ error: expect.stringMatching(/t\.de is not a \.tsv or \.jsonl file; choose one of those, or a source line file and then its target/) });
    expect(testDataOf(NODE_FS, 'encoder-decoder', ['/a', '/b', '/c'], '/w')).toEqual({ error: expect.stringMatching(/not 3 files/) });
    expect(testDataOf(NODE_FS, 'decoder-only', [], '/w')).toEqual({ error: 'Choose at least one test file.' });
    expect([isPairsFile('a.jsonl'), isPairsFile('a.tsv.bak'), isPairsFile('a.txt')]).toEqual([true, false, false]);
  });
});

describe('the result, for people', () => {
  it('one line for the notification', () => {
    expect(evalSummary(pairs)).toBe('loss 1.2346 · perplexity 3.44 · exact match 12.5% · BLEU 23.46 · 1,234 tokens · 1 too long');
    expect(evalSummary(docs)).toBe('loss 1.2346 · perplexity 3.44 · 1,234 tokens · 1 file skipped · 3 unseen characters');
  });

  it('lines for the log', () => {
    expect(evalLogLines(pairs)).toEqual([
      'Evaluated step 400 on /w/test.tsv (41 pairs) (context 24 tokens)',
      '  loss 1.2346 nats/token · perplexity 3.44 · 1,234 tokens',
      '  40 pairs scored, 1 longer than the context left out',
      '  exact match 12.5% · BLEU 23.46 (greedy decodes of every pair)',
    ]);
    expect(evalLogLines({ ...pairs, decoded: 10 })[3]).toMatch(/of the first 10 of 40 pairs\)$/);
    expect(evalLogLines(docs).slice(2)).toEqual([
      '  2 documents scored',
      '  skipped 1 (1 binary): img.png',
      '  3 of 900 characters never occur in the training data (e.g. "é", "\\n")',
    ]);
  });
});
