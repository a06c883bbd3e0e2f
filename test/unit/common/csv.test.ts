import { describe, expect, it } from 'vitest';
import { csvField, headScoreRowsOf, headScoresCsv, metricsCsv, parseCsv, toCsv } from '../../../src/common/csv';
import type { StepMetrics } from '../../../src/protocol/data';

const step = (n: number, extra: Partial<StepMetrics> = {}): StepMetrics => ({
  step: n,
  loss: 3 - n / 10,
  lr: 1e-3 * n,
  gradNorm: 0.5,
  tokens: 256,
  tokensPerSec: 12345.678,
  elapsedMs: 100 * n,
  ...extra,
});

describe('csv writer', () => {
  it('quotes only the fields that need it, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(null)).toBe('');
    expect(csvField(Number.NaN)).toBe('');
    expect(csvField(Number.POSITIVE_INFINITY)).toBe('');
    expect(csvField(-0.5)).toBe('-0.5');
  });

  it('round-trips text with commas, quotes and line breaks, and numbers bit for bit', () => {
    const nums = [0.1, 1 / 3, 3e-7, 123456789.123, -2.5e20, 5e-324, 0.30000000000000004];
    const rows = [['a,b', 'q"uote', 'line\r\nbreak', ''], ...nums.map((x) => [String(x), 'n', 'x', '0'])];
    const text = toCsv(['h 1', 'h,2', 'h3', 'h4'], [rows[0] as string[], ...nums.map((x) => [x, 'n', 'x', 0])]);
    expect(text.endsWith('\r\n')).toBe(true);
    const back = parseCsv(text);
    expect(back[0]).toEqual(['h 1', 'h,2', 'h3', 'h4']);
    expect(back.slice(1)).toEqual(rows);
    expect(back.slice(2).map((r) => Number(r[0]))).toEqual(nums);
  });
});

describe('metricsCsv', () => {
  it('writes one record per (run, step), the evaluation on its step, and an evaluation-only step on its own record', () => {
    const csv = metricsCsv([
      {
        name: 'run, one',
        steps: [step(1), step(2)],
        evals: [
          { step: 2, loss: 2.5, ppl: Math.exp(2.5), exactMatch: null, bleu: null },
          { step: 3, loss: 2.4, ppl: 11, exactMatch: 0.5, bleu: null },
        ],
      },
      { name: 'two', steps: [step(1, { loss: Number.NaN })], evals: [] },
    ]);
    const rows = parseCsv(csv);
    expect(rows[0]).toEqual([
      'step',
      'run',
      'train loss',
      'val loss',
      'val perplexity',
      'lr',
      'grad norm',
      'tokens',
      'tokens/s',
      'elapsed (s)',
      'exact match',
    ]);
    expect(rows.slice(1).map((r) => [r[0], r[1]])).toEqual([
      ['1', 'run, one'],
      ['2', 'run, one'],
      ['3', 'run, one'],
      ['1', 'two'],
    ]);
    expect(rows[2]).toEqual([
      '2',
      'run, one',
      '2.8',
      '2.5',
      String(Math.exp(2.5)),
      '0.002',
      '0.5',
      '256',
      '12345.678',
      '0.2',
      '',
    ]);
    expect(rows[3]?.slice(2, 4)).toEqual(['', '2.4']);
    expect(rows[3]?.[10]).toBe('0.5');
    expect(rows[4]?.[2]).toBe('');
  });
});

describe('headScoresCsv', () => {
  it('adds a kvGroup column after head when the heads share key/value heads (grouped-query attention)', () => {
    const scores = { previousToken: 0.5, firstToken: 0.1, diagonal: 0.2, induction: 0.3, entropy: 1 };
    const rows = headScoreRowsOf([
      {
        step: 10,
        headScores: [0, 1, 2, 3].map((head) => ({
          stack: 'decoder.self' as const,
          layer: 0,
          head,
          kvGroup: head < 2 ? 0 : 1,
          scores,
        })),
      },
    ]);
    const t = parseCsv(headScoresCsv(rows));
    expect(t[0]?.slice(0, 6)).toEqual(['step', 'stack', 'layer', 'head', 'kvGroup', 'previousToken']);
    expect(t.slice(1).map((r) => [r[3], r[4]])).toEqual([
      ['1', '1'],
      ['2', '1'],
      ['3', '2'],
      ['4', '2'],
    ]);
    expect(t[1]?.length).toBe(t[0]?.length);
    // Without grouped heads the table keeps its columns.
    expect(parseCsv(headScoresCsv([{ step: 1, stack: 'decoder.self', layer: 1, head: 1, scores }]))[0]).not.toContain(
      'kvGroup',
    );
  });

  it('lists every head 1-based with the scores its kind has, empty cells for the others', () => {
    const rows = headScoreRowsOf([
      { step: 0 },
      {
        step: 5,
        headScores: [
          {
            stack: 'decoder.self',
            layer: 0,
            head: 1,
            scores: { previousToken: 0.9, firstToken: 0.05, diagonal: 0.01, induction: 0.2, entropy: 1.25 },
          },
          { stack: 'decoder.cross', layer: 1, head: 0, scores: { diagonal: 0.1, antiDiagonal: 0.8, entropy: 0.5 } },
        ],
      },
    ]);
    const t = parseCsv(headScoresCsv(rows));
    expect(t[0]).toEqual([
      'step',
      'stack',
      'layer',
      'head',
      'previousToken',
      'firstToken',
      'diagonal',
      'antiDiagonal',
      'induction',
      'entropy',
    ]);
    expect(t[1]).toEqual(['5', 'decoder.self', '1', '2', '0.9', '0.05', '0.01', '', '0.2', '1.25']);
    expect(t[2]).toEqual(['5', 'decoder.cross', '2', '1', '', '', '0.1', '0.8', '', '0.5']);
    expect(
      parseCsv(headScoresCsv([{ step: null, stack: 'encoder.self', layer: 1, head: 1, deltaLoss: -0.25 }])),
    ).toEqual([
      [
        'step',
        'stack',
        'layer',
        'head',
        'previousToken',
        'firstToken',
        'diagonal',
        'antiDiagonal',
        'induction',
        'entropy',
        'deltaLoss',
      ],
      ['', 'encoder.self', '1', '1', '', '', '', '', '', '', '-0.25'],
    ]);
  });
});
