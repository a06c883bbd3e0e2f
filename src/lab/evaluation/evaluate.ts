/**
 * Validation: mean loss without dropout or label smoothing, perplexity, and for
 * source→target pairs the exact-match rate and corpus BLEU of greedy decodes (detokenized
 * text against the reference, as sacreBLEU scores it).
 */

import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { corpusBleu } from './bleu';
import type { Dataset, PairExample } from '../data/dataset';
import { greedyTarget } from '../inference/decode';

/** Validation results (no step). */
export interface EvalResult {
  readonly loss: number;
  readonly ppl: number;
  readonly exactMatch: number | null;
  readonly bleu: number | null;
}

/** Greedy translation of one source (tokens + EOS) to text. */
export function translate(model: Transformer, tok: Tokenizer, src: Int32Array): string {
  return tok.decode(greedyTarget(model, tok.specialIds, src), { skipSpecial: true });
}

/** Exact match and BLEU of greedy decodes of `pairs`; `onPair` runs after each decode (it may throw to stop). */
export function scorePairs(model: Transformer, tok: Tokenizer, pairs: readonly PairExample[], onPair?: () => void): { exactMatch: number; bleu: number } {
  const hyps = pairs.map((p) => {
    const h = translate(model, tok, p.src);
    onPair?.();
    return h;
  });
  const refs = pairs.map((p) => p.tgtText);
  const exact = hyps.filter((h, i) => h === refs[i]).length;
  return { exactMatch: pairs.length ? exact / pairs.length : 0, bleu: pairs.length ? corpusBleu(hyps, refs).score : 0 };
}

/** Loss over the validation batches (token-weighted), and decode metrics for pairs. */
export function evaluate(model: Transformer, dataset: Dataset, tok: Tokenizer, opts: { maxPairs: number }): EvalResult {
  let sum = 0;
  let count = 0;
  for (const b of dataset.valBatches()) {
    const r = model.forward(b, { train: false, labelSmoothing: 0 });
    sum += r.loss * r.tokens;
    count += r.tokens;
  }
  const loss = count ? sum / count : Number.NaN;
  let exactMatch: number | null = null;
  let bleu: number | null = null;
  if (dataset.kind === 'pairs' && dataset.valPairs.length) {
    const s = scorePairs(model, tok, dataset.valPairs.slice(0, opts.maxPairs));
    exactMatch = s.exactMatch;
    bleu = s.bleu;
  }
  return { loss, ppl: Math.exp(loss), exactMatch, bleu };
}
