/**
 * Corpus BLEU (Papineni et al., 2002, "BLEU: a Method for Automatic Evaluation of Machine
 * Translation") computed the way sacreBLEU does by default on detokenized text (Post,
 * 2018, "A Call for Clarity in Reporting BLEU Scores"): the `13a` tokenizer of WMT's
 * mteval-v13a.pl, case-sensitive, word n-grams of orders 1–4 with counts clipped by the
 * reference and summed over the corpus, brevity penalty exp(1 − r/c) when c < r,
 * geometric mean of the four precisions, and the `exp` smoothing sacreBLEU's corpus_bleu
 * uses (NIST's: the k-th order with no match gets precision 1 / (2^k · total n-grams),
 * Chen & Cherry 2014, method 3). Scores are on sacreBLEU's 0–100 scale.
 *
 * Leaves out: multiple references per sentence, other tokenizers (intl, zh, ja-mecab,
 * char), lowercasing, effective order (sentence BLEU), and the other smoothing methods.
 */

import { EngineError } from '../../engine/errors';

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

/** The characters Python's `str.split()` / `str.strip()` treat as whitespace. */
const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const SPLIT_RE = new RegExp(`[${PY_SPACE}]+`, 'u');
const TRAILING_RE = new RegExp(`[${PY_SPACE}]+$`, 'u');

/**
 * mteval-v13a's language-dependent rules, in order, as sacreBLEU's TokenizerRegexp has them.
 * 1. Split off every ASCII symbol except `'`, `-`, `.` and `,`: the ranges { | } ~,
 *    [ \ ] ^ _ `, space ! " # $ % &, ( ) * +, : ; < = > ? @, and /.
 * 2. Split `.` and `,` unless preceded by a digit.  3. … unless followed by a digit.
 * 4. Split `-` when preceded by a digit.
 */
const RULES: readonly (readonly [RegExp, string])[] = [
  [/([\x7b-\x7e\x5b-\x60\x20-\x26\x28-\x2b\x3a-\x40\x2f])/gu, ' $1 '],
  [/([^0-9])([.,])/gu, '$1 $2 '],
  [/([.,])([^0-9])/gu, ' $1 $2'],
  [/([0-9])(-)/gu, '$1 $2 '],
];

/**
 * Tokens of `line` under sacreBLEU's `13a` tokenizer (after the trailing-whitespace strip
 * sacreBLEU's BLEU applies first): drops `<skipped>`, joins `-\n` hyphenations, unescapes
 * `&quot; &amp; &lt; &gt;`, then applies the mteval-v13a punctuation rules.
 */
export function tokenize13a(line: string): string[] {
  let s = line.replace(TRAILING_RE, '');
  s = s.replaceAll('<skipped>', '').replaceAll('-\n', '').replaceAll('\n', ' ');
  s = s.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  s = ` ${s} `;
  for (const [re, repl] of RULES) s = s.replace(re, repl);
  return s.split(SPLIT_RE).filter((t) => t !== '');
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
 * `refs[i]`), as `sacrebleu.corpus_bleu(hyps, [refs])` computes it with its defaults.
 * A corpus whose hypotheses share no unigram with the references, or have no 4-grams at
 * all (every hypothesis shorter than four tokens), scores 0, as in sacreBLEU.
 */
export function corpusBleu(hyps: readonly string[], refs: readonly string[]): BleuResult {
  if (hyps.length !== refs.length) {
    throw new EngineError(
      'input/invalid',
      `BLEU needs one reference per hypothesis; got ${hyps.length} hypotheses and ${refs.length} references. Pass lists of equal length.`,
    );
  }
  const counts = [0, 0, 0, 0];
  const totals = [0, 0, 0, 0];
  let sysLen = 0;
  let refLen = 0;
  for (let k = 0; k < hyps.length; k++) {
    const hyp = tokenize13a(hyps[k] as string);
    const ref = tokenize13a(refs[k] as string);
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
