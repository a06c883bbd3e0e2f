/**
 * Corpus chrF (Popović, 2015, "chrF: character n-gram F-score for automatic MT evaluation")
 * as sacreBLEU 2.6.0 computes it with its defaults: character n-grams of orders 1–6 with
 * whitespace removed (so it needs no tokenizer and means the same in every language), no
 * word n-grams, β = 2 (recall weighs twice precision), case-sensitive; the hypothesis,
 * reference and matching n-gram counts of each order are summed over the corpus, the
 * precisions and recalls of the orders that have n-grams on both sides are averaged, and
 * F_β of the averages is the score (0–100).
 *
 * Leaves out: chrF++ (word n-grams), lowercasing, whitespace n-grams, the epsilon smoothing
 * of chrF++.py, and multiple references.
 */

import { EngineError } from '../../engine/errors';
import { SACREBLEU_VERSION } from './bleu';
import { pySplit } from './bleuTokenizers';

const CHAR_ORDER = 6;
const BETA = 2;

/** sacreBLEU's signature of chrF with its defaults and one reference. */
export function chrfSignature(): string {
  return `nrefs:1|case:mixed|eff:yes|nc:${CHAR_ORDER}|nw:0|space:no|version:${SACREBLEU_VERSION}`;
}

/**
 * Character n-gram counts of orders 1..CHAR_ORDER of `line` without its whitespace (code points, as Python indexes
 * strings).
 */
function charNgrams(line: string): Map<string, number>[] {
  const chars = Array.from(pySplit(line).join(''));
  const out: Map<string, number>[] = [];
  for (let n = 1; n <= CHAR_ORDER; n++) {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= chars.length; i++) {
      const g = chars.slice(i, i + n).join('');
      counts.set(g, (counts.get(g) ?? 0) + 1);
    }
    out.push(counts);
  }
  return out;
}

/** F_β of corpus statistics [hyp, ref, match] per order, sacreBLEU's `_compute_f_score` without epsilon smoothing. */
function fScore(stats: readonly (readonly [number, number, number])[]): number {
  const factor = BETA * BETA;
  let prec = 0;
  let rec = 0;
  let orders = 0;
  for (const [hyp, ref, match] of stats) {
    if (hyp > 0 && ref > 0) {
      prec += match / hyp;
      rec += match / ref;
      orders++;
    }
  }
  if (orders === 0) return 0;
  prec /= orders;
  rec /= orders;
  return prec + rec > 0 ? 100 * (((1 + factor) * prec * rec) / (factor * prec + rec)) : 0;
}

/** Corpus chrF of `hyps[i]` against `refs[i]`, as `CHRF().corpus_score(hyps, [refs])` computes it. */
export function corpusChrf(hyps: readonly string[], refs: readonly string[]): number {
  if (hyps.length !== refs.length) {
    throw new EngineError(
      'input/invalid',
      `chrF needs one reference per hypothesis; got ${hyps.length} hypotheses and ${refs.length} ` +
        `references. Pass lists of equal length.`,
    );
  }
  const stats = Array.from({ length: CHAR_ORDER }, () => [0, 0, 0] as [number, number, number]);
  for (let k = 0; k < hyps.length; k++) {
    const h = charNgrams(hyps[k] as string);
    const r = charNgrams(refs[k] as string);
    for (let n = 0; n < CHAR_ORDER; n++) {
      const hn = h[n] as Map<string, number>;
      const rn = r[n] as Map<string, number>;
      const s = stats[n] as [number, number, number];
      let hypCount = 0;
      let match = 0;
      for (const [g, c] of hn) {
        hypCount += c;
        match += Math.min(c, rn.get(g) ?? 0);
      }
      let refCount = 0;
      for (const c of rn.values()) refCount += c;
      // sacreBLEU counts a hypothesis's n-grams only where the reference has some of that order.
      s[0] += rn.size > 0 ? hypCount : 0;
      s[1] += refCount;
      s[2] += match;
    }
  }
  return fScore(stats);
}
