import { describe, expect, it } from 'vitest';
import type { EvaluationRecord } from '../../../../src/protocol/evaluation';
import type { RunSummary } from '../../../../src/protocol/webview';
import type { ComparedRun } from '../../../../webview/panels/runComparison';
import { comparisonRows } from '../../../../webview/panels/runComparison';
import { PAIRS_RECORD } from '../../../evalOutputs';

const summary = (name: string, tokenizer?: RunSummary['tokenizer']): RunSummary =>
  ({
    id: name,
    name,
    runDir: name,
    status: 'completed',
    kind: 'encoder-decoder',
    step: 10,
    totalSteps: 10,
    segments: [],
    bestValLoss: null,
    model: null,
    data: null,
    ...(tokenizer ? { tokenizer } : {}),
  }) as RunSummary;
const rec = (over: Partial<EvaluationRecord>): EvaluationRecord => ({ ...PAIRS_RECORD, ...over });

describe('comparisonRows', () => {
  it('always lists tokenizer, vocabulary and the latest validation loss per token and per byte', () => {
    const runs: ComparedRun[] = [
      {
        summary: summary('char', { type: 'char', vocabSize: 290 }),
        evals: [
          { step: 5, loss: 2, ppl: 7.4, exactMatch: null, bleu: null, bpb: 2.9 },
          { step: 10, loss: 1.5, ppl: 4.5, exactMatch: null, bleu: null, bpb: 2.16 },
        ],
        evaluations: [],
      },
      {
        summary: summary('old'),
        evals: [{ step: 10, loss: 1.2, ppl: 3.3, exactMatch: null, bleu: null }],
        evaluations: [],
      },
    ];
    expect(comparisonRows(runs)).toEqual([
      { key: 'tokenizer', values: ['char', '—'] },
      { key: 'vocabulary', values: ['290 tokens', '—'] },
      { key: 'validation loss (nats/token)', values: ['1.5000', '1.2000'] },
      { key: 'validation bits/byte', values: ['2.1600', '—'] },
    ]);
  });

  it("lines up each run's latest evaluation on a test set two or more share, by content hash", () => {
    const a = {
      summary: summary('a', { type: 'char', vocabSize: 290 }),
      evals: [],
      evaluations: [
        rec({ step: 4, at: '2025-01-01T00:00:00Z', translation: { ...PAIRS_RECORD.translation!, bleu: 10 } }),
        rec({ step: 8, at: '2025-01-02T00:00:00Z', translation: { ...PAIRS_RECORD.translation!, bleu: 20 } }),
        rec({ dataHash: 'only-a', step: 8 }),
      ],
    };
    const b = {
      summary: summary('b', { type: 'bpe', vocabSize: 1000 }),
      evals: [],
      evaluations: [
        rec({ step: 9, at: '2025-01-03T00:00:00Z', translation: { ...PAIRS_RECORD.translation!, bleu: 30 } }),
      ],
    };
    const c = { summary: summary('c', { type: 'bpe', vocabSize: 500 }), evals: [], evaluations: [] };
    const rows = comparisonRows([a, b, c]).slice(4);
    expect(rows.map((r) => r.key)).toEqual([
      'test.tsv (40 pairs) · step',
      'test.tsv (40 pairs) · loss (nats/token)',
      'test.tsv (40 pairs) · bits/byte',
      'test.tsv (40 pairs) · BLEU',
      'test.tsv (40 pairs) · chrF',
      'test.tsv (40 pairs) · exact match',
    ]);
    expect(rows[0]?.values).toEqual(['8', '9', '—']);
    expect(rows[3]?.values).toEqual(['20.00 tok:13a', '30.00 tok:13a', '—']);
  });
});
