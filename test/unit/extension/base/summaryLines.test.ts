import { describe, expect, it } from 'vitest';
import { dataLine, decodeMessage, estimateLine, skippedReasons } from '../../../../src/extension/base/summaryLines';
import type { DecodeOutput } from '../../../../src/protocol/model';

describe('summaryLines', () => {
  it('summarizes skipped files by reason and the data of a run', () => {
    const skipped = [
      { path: 'a', reason: 'binary' as const },
      { path: 'b', reason: 'ignored' as const },
      { path: 'c', reason: 'binary' as const },
    ];
    expect(skippedReasons(skipped)).toBe('2 binary, 1 ignored by .gitignore');
    const d = {
      description: '4 documents under /w',
      documents: 4,
      bytes: 3 * 1024,
      trainTokens: 1,
      valTokens: 1,
      skipped,
    };
    expect(dataLine(d)).toBe('4 files (3 KB) · skipped 3: 2 binary, 1 ignored by .gitignore');
    expect(dataLine({ ...d, bytes: 0, skipped: [] })).toBe('4 documents under /w');
  });

  it('estimates a configuration in one line', () => {
    expect(estimateLine(124_439, 6.4 * 1024 * 1024, 0.012)).toBe('124k parameters · ~6.4 MB · ≈ 12ms/step');
    expect(estimateLine(1_234_567, 48 * 1024 * 1024, null)).toBe('1.23M parameters · ~48 MB');
  });

  it('says how many tokens a decode gave and why it stopped, with the context note', () => {
    const out = (n: number, stopReason: DecodeOutput['stopReason'], contextNote?: string): DecodeOutput => ({
      text: 'x'.repeat(n),
      promptTokens: ['<bos>'],
      tokens: Array<string>(n).fill('x'),
      ids: Array<number>(n).fill(7),
      logprobs: Array<number>(n).fill(-1),
      score: -n,
      attention: null,
      beams: [],
      stopReason,
      ...(contextNote !== undefined ? { contextNote } : {}),
    });
    const slid =
      "Generated 200 tokens past the model's context of 32 with a sliding window: each token was chosen from the last 16–32 tokens before it.";
    expect(decodeMessage('run-1', out(200, 'maxTokens', slid))).toBe(
      `Decoded 200 token(s) with run-1 — as many as asked for (max tokens); the setting attentionLab.decode.maxTokens asks for more. ${slid}`,
    );
    expect(decodeMessage('run-1', out(12, 'eos'))).toBe(
      'Decoded 12 token(s) with run-1 — the model ended the text (it chose the end-of-sequence token).',
    );
    const stopped =
      "Stopped at the model's context of 32 tokens after 31 of 200 token(s); beam search does not slide; use greedy or sampling to generate more.";
    expect(decodeMessage('run-1', out(31, 'context', stopped))).toBe(
      `Decoded 31 token(s) with run-1 — stopped at the model's context. ${stopped}`,
    );
  });
});
