import { describe, expect, it } from 'vitest';
import {
  SURPRISE_BUCKETS,
  bucketOf,
  hoverText,
  scoreSummary,
  scoredTokens,
  splitPair,
} from '../../../../src/extension/commands/surprise';

describe('surprise', () => {
  it('buckets surprise at the declared bounds', () => {
    expect([0, 0.49, 0.5, 1.49, 2.9, 3, 4.99, 5, 40, Infinity].map(bucketOf)).toEqual([0, 0, 1, 1, 2, 3, 3, 4, 4, 4]);
    expect(SURPRISE_BUCKETS).toHaveLength(4);
  });

  it('turns log-probabilities into surprise, and says so in the hover', () => {
    const out = {
      tokens: ['a', 'b'],
      logprobs: [Math.log(0.5), Math.log(0.01)],
      starts: [0, 1],
      ends: [1, 2],
      truncated: 0,
    };
    const t = scoredTokens(out);
    expect(t[0]?.surprise).toBeCloseTo(Math.LN2, 12);
    expect(t[1]?.surprise).toBeCloseTo(-Math.log(0.01), 12);
    expect(t.map((x) => x.bucket)).toEqual([1, 3]);
    expect(hoverText(t[0]!)).toBe('Token `"a"` — surprise 0.69 nats (p = 50%, log p = -0.693)');
    expect(hoverText(t[1]!)).toMatch(/p = 1%/);
    const mean = (Math.LN2 - Math.log(0.01)) / 2;
    expect(scoreSummary(t, 3)).toBe(
      `2 tokens · mean surprise ${mean.toFixed(2)} nats · perplexity ${Math.exp(mean).toFixed(2)} · most surprising "b" (4.61) · 3 tokens past the scoring limit were not scored`,
    );
    expect(scoreSummary([], 0)).toBe('Nothing was scored.');
  });

  it('splits a selected pair line at a tab or an arrow', () => {
    expect(splitPair('abc\tcba')).toEqual({ source: 'abc', target: 'cba', targetStart: 4 });
    expect(splitPair('12+3 → 15')).toEqual({ source: '12+3', target: '15', targetStart: 7 });
    expect(splitPair('x -> y')).toEqual({ source: 'x', target: 'y', targetStart: 5 });
    expect(splitPair('no separator')).toBeNull();
  });
});
