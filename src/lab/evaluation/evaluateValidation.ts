/**
 * `attention-lab eval --run DIR` without test files: the run's own validation split, as
 * training holds it out, scored with the lab's evaluation (loss, perplexity, bits per byte;
 * for pairs exact match, BLEU and chrF of greedy or beam-search decodes) and recorded in the
 * run's evaluations.jsonl like every evaluation.
 *
 * Leaves out: evaluation during training (the session calls evaluate.ts itself, into
 * metrics.jsonl) and test files (evaluateFiles.ts).
 */

import type { Backend } from '../../engine/backend';
import type { BleuTokenize, EvalDecoding, EvaluationRecord, TranslationScores } from '../../protocol/evaluation';
import type { LabFs } from '../files/labFs';
import { openRun } from '../inference/openRun';
import { readRunJson } from '../runs/runFolder';
import { buildDataset, loadRunData } from '../data/runData';
import { readTokenizer } from '../runs/tokenizerFile';
import { bitsPerByte } from './bitsPerByte';
import { scorePairs, validationLoss } from './evaluate';
import { recordEvaluation, validationHashOf } from '../runs/evaluations';

/** Options of {@link evaluateValidation}. */
export interface ValidationOptions {
  readonly maxPairs: number;
  readonly decoding: EvalDecoding;
  readonly tokenize: BleuTokenize | null;
  readonly hypothesesFile?: string;
  /** Hears the result before it is recorded (a command prints it): a refused record loses nothing. */
  readonly onResult?: (result: ValidationEvaluation) => void;
}

/** What the validation split measured, and the line recorded for it. */
export interface ValidationEvaluation {
  readonly step: number;
  readonly loss: number;
  readonly ppl: number;
  readonly bpb: number | null;
  readonly tokens: number;
  readonly bytes: number;
  readonly translation: TranslationScores | null;
  readonly bleuTokenizeReason: string | null;
  readonly hypotheses: readonly string[];
  readonly record: EvaluationRecord;
}

/** Scores the run in `runDir` (on `fs`) on its validation split (see the file comment) and records it. */
export async function evaluateValidation(
  fs: LabFs,
  runDir: string,
  backend: Backend,
  opts: ValidationOptions,
): Promise<ValidationEvaluation> {
  const run = await readRunJson(fs, runDir);
  const tok = await readTokenizer(fs, runDir);
  const data = await loadRunData(fs, run.spec, tok, { need: 'validation' });
  const { dataset } = buildDataset(run.spec, data, run.config.maxLen);
  const r = await openRun(fs, runDir, backend, dataset.maxBatch);
  const l = validationLoss(r.model, dataset, tok);
  const pairs = dataset.kind === 'pairs' ? dataset.valPairs.slice(0, opts.maxPairs) : [];
  const scored = pairs.length
    ? scorePairs(r.model, tok, pairs, { decoding: opts.decoding, tokenize: opts.tokenize })
    : null;
  const translation = scored && {
    decoded: scored.decoded,
    exactMatch: scored.exactMatch,
    bleu: scored.bleu,
    bleuSignature: scored.bleuSignature,
    chrf: scored.chrf,
    chrfSignature: scored.chrfSignature,
    decoding: scored.decoding,
  };
  const hypotheses = scored?.hypotheses ?? [];
  const bpb = bitsPerByte(l.loss, l.tokens, l.bytes);
  const measured = {
    step: r.step,
    loss: l.loss,
    ppl: Math.exp(l.loss),
    bpb,
    tokens: l.tokens,
    bytes: l.bytes,
    translation,
    bleuTokenizeReason: scored?.tokenizeReason ?? null,
    hypotheses,
  };
  const onRecord = opts.onResult && ((record: EvaluationRecord): void => opts.onResult?.({ ...measured, record }));
  const record = await recordEvaluation(
    fs,
    runDir,
    {
      step: r.step,
      data: 'validation',
      source: `the run's validation split (${run.data.validation?.text ?? 'held out from its data'})`,
      files: [],
      dataHash: await validationHashOf(run.spec.data, run.spec.training.seed),
      loss: l.loss,
      ppl: Math.exp(l.loss),
      tokens: l.tokens,
      bytes: l.bytes,
      bpb,
      items: dataset.kind === 'pairs' ? dataset.valPairs.length : 0,
      translation,
    },
    hypotheses,
    { ...opts, ...(onRecord ? { onRecord } : {}) },
  );
  return { ...measured, record };
}
