/**
 * Validation and the translation scores of decoded pairs: mean loss without dropout or label
 * smoothing, perplexity and bits per byte (bitsPerByte.ts); for source→target pairs the exact
 * match, corpus BLEU (sacreBLEU's, with the tokenizer the references' language calls for or
 * the one asked for) and chrF of decodes — greedy, or beam search — of the detokenized text
 * against the reference, as sacreBLEU scores a system's output.
 *
 * Leaves out: reading test files (evaluateFiles.ts) and recording results (evaluations.ts).
 */

import type { Batch } from '../../engine/models/inputs';
import { StepperWorkspace } from '../../engine/models/stepper';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { BleuTokenize, EvalDecoding, TranslationScores } from '../../protocol/evaluation';
import type { Dataset, PairExample } from '../data/dataset';
import { decodeTarget } from '../inference/decode';
import { ByteCounter, bitsPerByte } from './bitsPerByte';
import { bleuSignature, corpusBleu } from './bleu';
import { chooseBleuTokenizer } from './bleuTokenizers';
import { chrfSignature, corpusChrf } from './chrf';
import type { TextLoss } from './testLoss';
import { Progress, meanLoss } from './testLoss';

/** Validation results (no step). */
export interface EvalResult {
  readonly loss: number;
  readonly ppl: number;
  /** Bits per UTF-8 byte of the validation text (null when it has none). */
  readonly bpb: number | null;
  readonly exactMatch: number | null;
  readonly bleu: number | null;
}

/** Greedy decoding: what validation and `eval` use unless told otherwise. */
export const GREEDY: EvalDecoding = { strategy: 'greedy' };

/** Exact match, BLEU and chrF of decoded pairs, the hypotheses, and how BLEU tokenized. */
export interface PairScores extends TranslationScores {
  /** The decodes, in the order of the pairs. */
  readonly hypotheses: readonly string[];
  readonly tokenize: BleuTokenize;
  /** Why that tokenizer, for people ("the references are Chinese: …", "--bleu-tokenize"). */
  readonly tokenizeReason: string;
}

/** Options of {@link scorePairs}. */
export interface ScorePairsOptions {
  readonly decoding: EvalDecoding;
  /** The BLEU tokenizer; null: the one the references' language calls for (bleuTokenizers.ts). */
  readonly tokenize: BleuTokenize | null;
  /** Runs after each decode (it may throw to stop). */
  readonly onPair?: () => void;
}

/**
 * Decodes every pair's source and scores the decodes against the references. A line break in
 * a decode becomes a space, so that the hypotheses, written one per line, score the same.
 */
export function scorePairs(
  model: Transformer,
  tok: Tokenizer,
  pairs: readonly Pick<PairExample, 'src' | 'tgtText'>[],
  opts: ScorePairsOptions,
): PairScores {
  const workspace = new StepperWorkspace(model.backendOrThrow()); // one set of decode buffers for every pair
  const hypotheses = pairs.map((p) => {
    const h = tok
      .decode(decodeTarget(model, tok.specialIds, p.src, opts.decoding, workspace), { skipSpecial: true })
      .replace(/\r\n|[\r\n]/g, ' ');
    opts.onPair?.();
    return h;
  });
  const refs = pairs.map((p) => p.tgtText);
  const chosen =
    opts.tokenize !== null
      ? { tokenize: opts.tokenize, reason: 'chosen with --bleu-tokenize' }
      : chooseBleuTokenizer(refs);
  const exact = hypotheses.filter((h, i) => h === refs[i]).length;
  return {
    decoded: pairs.length,
    exactMatch: pairs.length ? exact / pairs.length : 0,
    bleu: pairs.length ? corpusBleu(hypotheses, refs, chosen.tokenize).score : 0,
    bleuSignature: bleuSignature(chosen.tokenize),
    chrf: pairs.length ? corpusChrf(hypotheses, refs) : 0,
    chrfSignature: chrfSignature(),
    decoding: opts.decoding,
    hypotheses,
    tokenize: chosen.tokenize,
    tokenizeReason: chosen.reason,
  };
}

/** Token-weighted loss over the validation batches, with the bytes of text their targets stand for. */
export function validationLoss(model: Transformer, dataset: Dataset, tok: Tokenizer): TextLoss {
  // A model planned for fewer rows than the batches (a WebGPU run's CPU copy) takes each in parts: the loss is
  // token-weighted, so the parts give the batch's loss.
  const batches = dataset.valBatches().flatMap((b) => rowsOf(b, model.maxBatch));
  return meanLoss(
    model,
    batches.length,
    (i) => batches[i] as Batch,
    new ByteCounter(tok, model.padId),
    new Progress(batches.length, {}),
  );
}

/** `b` cut into batches of at most `rows` rows (itself when it has no more). */
export function rowsOf(b: Batch, rows: number): Batch[] {
  if (b.B <= rows) return [b];
  const out: Batch[] = [];
  for (let r = 0; r < b.B; r += rows) {
    const n = Math.min(rows, b.B - r);
    const part = (x: Int32Array, width: number): Int32Array => x.subarray(r * width, (r + n) * width);
    out.push({
      B: n,
      T: b.T,
      input: part(b.input, b.T),
      targets: part(b.targets, b.T),
      ...(b.src !== undefined && b.S !== undefined ? { S: b.S, src: part(b.src, b.S) } : {}),
    });
  }
  return out;
}

/** Loss over the validation batches (token-weighted) with bits per byte, and greedy decode metrics for pairs. */
export function evaluate(model: Transformer, dataset: Dataset, tok: Tokenizer, opts: { maxPairs: number }): EvalResult {
  const l = validationLoss(model, dataset, tok);
  let exactMatch: number | null = null;
  let bleu: number | null = null;
  if (dataset.kind === 'pairs' && dataset.valPairs.length) {
    const s = scorePairs(model, tok, dataset.valPairs.slice(0, opts.maxPairs), { decoding: GREEDY, tokenize: null });
    exactMatch = s.exactMatch;
    bleu = s.bleu;
  }
  return { loss: l.loss, ppl: Math.exp(l.loss), bpb: bitsPerByte(l.loss, l.tokens, l.bytes), exactMatch, bleu };
}
