/**
 * Example results of an evaluation on test files (protocol `EvalFilesOutput`), valid against
 * the protocol, for the tests of the messages that carry them and the text that shows them.
 */

import type { EvaluationRecord } from '../src/protocol/evaluation';
import type { EvalFilesOutput } from '../src/protocol/modelWorker';

/** What evaluations.jsonl got for {@link PAIRS_OUTPUT}. */
export const PAIRS_RECORD: EvaluationRecord = {
  version: 1,
  at: '2025-01-02T03:04:05.000Z',
  step: 400,
  data: 'pairs',
  source: '/w/test.tsv (41 pairs)',
  files: [{ path: '/w/test.tsv', bytes: 812, sha256: 'ab'.repeat(32) }],
  dataHash: 'cd'.repeat(32),
  loss: 1.23456,
  ppl: Math.exp(1.23456),
  tokens: 1234,
  bytes: 1100,
  bpb: (1.23456 * 1234) / (1100 * Math.LN2),
  items: 40,
  translation: {
    decoded: 41,
    exactMatch: 0.125,
    bleu: 23.456,
    bleuSignature: 'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0',
    chrf: 45.678,
    chrfSignature: 'nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0',
    decoding: { strategy: 'greedy' },
  },
};

/** An evaluation on 41 pairs (one too long), greedy decodes. */
export const PAIRS_OUTPUT: EvalFilesOutput = {
  kind: 'pairs',
  source: '/w/test.tsv (41 pairs)',
  step: 400,
  context: 24,
  loss: 1.23456,
  ppl: Math.exp(1.23456),
  tokens: 1234,
  bytes: 1100,
  bpb: PAIRS_RECORD.bpb,
  documents: 0,
  pairs: 40,
  pairsTooLong: 1,
  sourcesCut: 0,
  translation: PAIRS_RECORD.translation,
  bleuTokenizeReason: 'sacreBLEU’s default',
  hypotheses: ['a b', 'c'],
  skipped: [],
  characters: 900,
  unseenChars: 0,
  unseenExamples: [],
  record: PAIRS_RECORD,
};

/** An evaluation on two documents, one file skipped. */
export const DOCS_OUTPUT: EvalFilesOutput = {
  ...PAIRS_OUTPUT,
  kind: 'documents',
  source: '2 documents under /w',
  pairs: 0,
  pairsTooLong: 0,
  documents: 2,
  translation: null,
  bleuTokenizeReason: null,
  hypotheses: [],
  skipped: [{ path: 'img.png', reason: 'binary' }],
  unseenChars: 3,
  unseenExamples: ['é', '\n'],
  record: { ...PAIRS_RECORD, data: 'documents', source: '2 documents under /w', items: 2, translation: null },
};
