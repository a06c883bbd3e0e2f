/**
 * Corpus BLEU (Papineni et al., 2002, "BLEU: a Method for Automatic Evaluation of Machine
 * Translation") computed the way sacreBLEU does on detokenized text (Post, 2018, "A Call
 * for Clarity in Reporting BLEU Scores"): one of its tokenizers (bleuTokenizers.ts; `13a`,
 * WMT's mteval-v13a.pl, by default), case-sensitive, word n-grams of orders 1–4 with counts
 * clipped by the reference and summed over the corpus, brevity penalty exp(1 − r/c) when c < r,
 * geometric mean of the four precisions, and the `exp` smoothing sacreBLEU's corpus_bleu
 * uses (NIST's: the k-th order with no match gets precision 1 / (2^k · total n-grams),
 * Chen & Cherry 2014, method 3). Scores are on sacreBLEU's 0–100 scale.
 *
 * The score goes with sacreBLEU's signature ({@link bleuSignature}), which says how it was
 * computed.
 *
 * Leaves out: multiple references per sentence, lowercasing, effective order (sentence
 * BLEU), and the other smoothing methods.
 */

import { EngineError } from '../../engine/errors';
import type { BleuTokenize } from '../../protocol/evaluation';
import { bleuTokens } from './bleuTokenizers';

/** Sufficient statistics and score of corpus BLEU, as sacreBLEU's BLEUScore reports them. */
export interface BleuResult {
  /** BLEU on a 0–100 scale. */
  readonly score: number;
  /** Precisions of orders 1–4 on a 0–100 scale (smoothed where an order had no match). */
  readonly precisions: readonly [number, number, number, number];
  /** Brevity penalty in [0, 1]. */
  readonly bp: number;
  /** Hypothesis tokens in the corpus. */
  readonly sysLen: number;
  /** Reference tokens in the corpus. */
  readonly refLen: number;
  /** Clipped matching n-grams of orders 1–4. */
  readonly counts: readonly [number, number, number, number];
  /** Hypothesis n-grams of orders 1–4. */
  readonly totals: readonly [number, number, number, number];
}

const MAX_ORDER = 4;

/** The sacreBLEU version whose BLEU, chrF and signatures these reproduce (test/golden/bleu/). */
export const SACREBLEU_VERSION = '2.6.0';

/** sacreBLEU's signature of corpus BLEU with one reference, mixed case and `exp` smoothing under `tokenize`. */
export function bleuSignature(tokenize: BleuTokenize): string {
  return `nrefs:1|case:mixed|eff:no|tok:${tokenize}|smooth:exp|version:${SACREBLEU_VERSION}`;
}

/** Counts of every n-gram of orders 1..MAX_ORDER (tokens hold no whitespace, so a space joins them unambiguously). */
function ngramCounts(tokens: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (let n = 1; n <= MAX_ORDER; n++) {
    for (let i = 0; i + n <= tokens.length; i++) {
      const key = tokens.slice(i, i + n).join(' ');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/**
 * Corpus BLEU of hypotheses against one reference each (`hyps[i]` is scored against
 * `refs[i]`), as `BLEU(tokenize=tokenize).corpus_score(hyps, [refs])` computes it.
 * A corpus whose hypotheses share no unigram with the references, or have no 4-grams at
 * all (every hypothesis shorter than four tokens), scores 0, as in sacreBLEU.
 */
export function corpusBleu(
  hyps: readonly string[],
  refs: readonly string[],
  tokenize: BleuTokenize = '13a',
): BleuResult {
  if (hyps.length !== refs.length) {
    throw new EngineError(
      'input/invalid',
      `BLEU needs one reference per hypothesis; got ${hyps.length} hypotheses and ${refs.length} ` +
        `references. Pass lists of equal length.`,
    );
  }
  const counts = [0, 0, 0, 0];
  const totals = [0, 0, 0, 0];
  let sysLen = 0;
  let refLen = 0;
  for (let k = 0; k < hyps.length; k++) {
    const hyp = bleuTokens(hyps[k] as string, tokenize);
    const ref = bleuTokens(refs[k] as string, tokenize);
    sysLen += hyp.length;
    refLen += ref.length;
    const refCounts = ngramCounts(ref);
    for (const [gram, c] of ngramCounts(hyp)) {
      const n = gram.split(' ').length - 1;
      totals[n] = (totals[n] as number) + c;
      counts[n] = (counts[n] as number) + Math.min(c, refCounts.get(gram) ?? 0);
    }
  }
  const bp = sysLen < refLen ? (sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0) : 1;
  const precisions = [0, 0, 0, 0];
  const result = (score: number): BleuResult => ({
    score,
    precisions: precisions as [number, number, number, number],
    bp,
    sysLen,
    refLen,
    counts: counts as [number, number, number, number],
    totals: totals as [number, number, number, number],
  });
  if (counts.every((c) => c === 0)) return result(0);
  let smooth = 1;
  for (let n = 0; n < MAX_ORDER; n++) {
    const total = totals[n] as number;
    if (total === 0) break; // no n-grams of this order: the precision stays 0 and so does BLEU
    const correct = counts[n] as number;
    if (correct === 0) {
      smooth *= 2;
      precisions[n] = 100 / (smooth * total);
    } else {
      precisions[n] = (100 * correct) / total;
    }
  }
  if (precisions.some((p) => p === 0)) return result(0);
  const logMean = precisions.reduce((sum, p) => sum + Math.log(p), 0) / MAX_ORDER;
  return result(bp * Math.exp(logMean));
}
