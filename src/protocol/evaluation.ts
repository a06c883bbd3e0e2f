/**
 * Evaluations of a run on test data, as the run keeps them: one line of its
 * `evaluations.jsonl` per `attention-lab eval` or "Evaluate on Files…" (lab/evaluation/
 * evaluations.ts writes and reads them), carried to the dashboard with the run. A line says
 * when, which files (with their sizes and a content hash, so "the same test set" is
 * recognised wherever it lies), the metrics, how the BLEU pairs were decoded, and the step of
 * the weights. Declared once as schemas (schema.ts); the types come from them.
 *
 * Leaves out: validation during training (data.ts `evalMetrics`, in metrics.jsonl).
 */

import type { Infer } from './schema';
import { arrayOf, literal, nonNegInt, nullable, num, obj, oneOf, optional, posInt, str, variants } from './schema';

/**
 * The tokenizers corpus BLEU can count words with, as sacreBLEU names them (the signature's
 * `tok:`): `13a` (its default), `zh` (Chinese), `char` (one token per character: Japanese
 * here, in place of MeCab), `intl` (mteval-v14's international rules). The implementations:
 * src/lab/evaluation/bleuTokenizers.ts.
 */
export const bleuTokenize = oneOf('13a', 'zh', 'char', 'intl');
/** A BLEU tokenizer's name. */
export type BleuTokenize = Infer<typeof bleuTokenize>;
export const BLEU_TOKENIZE: readonly BleuTokenize[] = bleuTokenize.values;

/** How the pairs scored by BLEU were decoded: greedily (the default) or by beam search (the paper's beam 4, α 0.6). */
export type EvalDecoding = Infer<typeof evalDecoding>;
export const evalDecoding = variants('strategy', {
  greedy: {},
  beam: { beam: posInt, lengthPenalty: num },
});
/** The decoding strategies of an evaluation, greedy first (the default). */
export const EVAL_STRATEGIES = Object.keys(evalDecoding.table) as readonly EvalDecoding['strategy'][];

/** Version of an `evaluations.jsonl` line this build writes and reads. */
export const EVALUATION_VERSION = 1;

/** One test file of an evaluation: its path when evaluated, size and SHA-256 of its bytes. */
export type EvaluatedFile = Infer<typeof evaluatedFile>;
export const evaluatedFile = obj({ path: str, bytes: nonNegInt, sha256: str });

/** Translation metrics of an evaluation on pairs. */
export type TranslationScores = Infer<typeof translationScores>;
export const translationScores = obj({
  /** Pairs decoded (the first `decoded` of the pairs scored for loss). */
  decoded: nonNegInt,
  exactMatch: num,
  /** Corpus BLEU (0–100) as sacreBLEU computes it, and its signature (which says the tokenizer). */
  bleu: num,
  bleuSignature: str,
  /** Corpus chrF (0–100) with sacreBLEU's defaults, and its signature. */
  chrf: num,
  chrfSignature: str,
  decoding: evalDecoding,
});

/** One line of a run's evaluations.jsonl. */
export type EvaluationRecord = Infer<typeof evaluationRecord>;
export const evaluationRecord = obj({
  version: literal(EVALUATION_VERSION),
  /** When it ran (ISO 8601). */
  at: str,
  /** Checkpoint step of the weights evaluated. */
  step: nonNegInt,
  /** Test documents, test pairs, or the run's own validation set. */
  data: oneOf('documents', 'pairs', 'validation'),
  /** The test data, for people. */
  source: str,
  files: arrayOf(evaluatedFile),
  /**
   * SHA-256 of the files' hashes (sorted), or of the run's validation split: equal exactly
   * when the test data is, so evaluations of different runs on it can be compared.
   */
  dataHash: str,
  /** Token-weighted mean loss in nats per token (no dropout, no label smoothing) and exp of it. */
  loss: num,
  ppl: num,
  /** Tokens scored and the UTF-8 bytes of text they stand for; bits per byte = loss · tokens / (bytes · ln 2). */
  tokens: nonNegInt,
  bytes: nonNegInt,
  bpb: nullable(num),
  /** Documents or pairs scored for loss. */
  items: nonNegInt,
  /** BLEU, chrF and exact match (pairs only). */
  translation: nullable(translationScores),
  /** Where the hypotheses were written (`eval --out FILE`), when they were. */
  hypothesesFile: optional(str),
});
