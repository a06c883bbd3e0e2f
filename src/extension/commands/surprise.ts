/**
 * Per-token surprise, for "Score Selection": surprise is −log p(token | context) in nats
 * (Shannon's self-information), bucketed into five shades for editor decorations, with the
 * hover text of each token and a one-line summary (mean surprise and perplexity =
 * exp(mean surprise), the standard language-model measure). Also splits a selected
 * "source<TAB>target" / "source → target" line for encoder-decoder runs. Pure.
 *
 * Leaves out: the decorations themselves (scoreDecorations.ts).
 */

import { formatPercent, formatPerplexity } from '../../common/format';
import type { ScoreOutput } from '../../protocol/modelWorker';
import { describeToken, isPartialLabel } from '../../common/tokenLabels';

/** Upper bounds (nats) of the first four buckets; the fifth is everything above. */
export const SURPRISE_BUCKETS: readonly number[] = [0.5, 1.5, 3, 5];

/** The bucket 0..4 of a surprise value. */
export function bucketOf(surprise: number): number {
  if (!Number.isFinite(surprise)) return SURPRISE_BUCKETS.length;
  const i = SURPRISE_BUCKETS.findIndex((b) => surprise < b);
  return i < 0 ? SURPRISE_BUCKETS.length : i;
}

/** One scored token placed in the scored text. */
export interface ScoredToken {
  readonly token: string;
  readonly start: number;
  readonly end: number;
  readonly logprob: number;
  readonly surprise: number;
  readonly bucket: number;
}

/** The tokens of a score output with their surprise and bucket. */
export function scoredTokens(out: ScoreOutput): ScoredToken[] {
  return out.tokens.map((token, i) => {
    const logprob = out.logprobs[i] as number;
    const surprise = -logprob;
    return {
      token,
      start: out.starts[i] as number,
      end: out.ends[i] as number,
      logprob,
      surprise,
      bucket: bucketOf(surprise),
    };
  });
}

/** Hover text of one token. */
export function hoverText(t: ScoredToken): string {
  const p = Math.exp(t.logprob);
  // Below 0.1% a percentage says little; the exponent says how unlikely.
  const pct = p >= 0.001 ? formatPercent(p) : p.toExponential(1);
  const split = isPartialLabel(t.token) ? ` (${describeToken(t.token).slice(t.token.length + 3)})` : '';
  return (
    `Token \`${JSON.stringify(t.token)}\`${split} — surprise ${t.surprise.toFixed(2)} nats (p ` +
    `= ${pct}, log p = ${t.logprob.toFixed(3)})`
  );
}

/** "42 tokens · mean surprise 1.23 nats · perplexity 3.42 · most surprising "x" (5.20)". */
export function scoreSummary(tokens: readonly ScoredToken[], truncated: number): string {
  if (tokens.length === 0) return 'Nothing was scored.';
  const mean = tokens.reduce((a, t) => a + t.surprise, 0) / tokens.length;
  const worst = tokens.reduce((a, t) => (t.surprise > a.surprise ? t : a));
  const cut = truncated > 0 ? ` · ${truncated} tokens past the scoring limit were not scored` : '';
  return (
    `${tokens.length} tokens · mean surprise ${mean.toFixed(2)} nats · perplexity ` +
    `${formatPerplexity(Math.exp(mean))} · most surprising ${JSON.stringify(worst.token)} ` +
    `(${worst.surprise.toFixed(2)})${cut}`
  );
}

/** Source and target of a selected pair line, and where the target starts in it; null when there is no separator. */
export function splitPair(text: string): { source: string; target: string; targetStart: number } | null {
  for (const sep of ['\t', ' → ', ' -> ']) {
    const i = text.indexOf(sep);
    if (i >= 0) return { source: text.slice(0, i), target: text.slice(i + sep.length), targetStart: i + sep.length };
  }
  return null;
}
