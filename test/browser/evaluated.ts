/**
 * Two runs of the reverse task for the evaluation and comparison tests, built from the
 * recorded encoder-decoder fixture: one with a character tokenizer (a byte per token) and one
 * standing for a BPE run (three bytes per token), each step logging the bytes its targets
 * stand for, each validation its bits per byte, and each with evaluations on test data —
 * two of them on the same test file (the same data hash), so the compare table lines them up.
 *
 * Leaves out: realism of the BPE run's losses (they are the char run's, shifted).
 */

import type { EvaluationRecord } from '../../src/protocol/evaluation';
import type { RunState } from '../../src/protocol/webview';
import { enc } from './data';

const SHARED = 'a1'.repeat(32);
const SIG = (tok: string): string => `nrefs:1|case:mixed|eff:no|tok:${tok}|smooth:exp|version:2.6.0`;
const CHRF = 'nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0';

/** One evaluation on test pairs. */
export function pairsEvaluation(
  step: number,
  at: string,
  loss: number,
  bleu: number,
  dataHash = SHARED,
): EvaluationRecord {
  return {
    version: 1,
    at,
    step,
    data: 'pairs',
    source: '/w/test/reverse.tsv (50 pairs)',
    files: [{ path: '/w/test/reverse.tsv', bytes: 900, sha256: 'f0'.repeat(32) }],
    dataHash,
    loss,
    ppl: Math.exp(loss),
    tokens: 600,
    bytes: 550,
    bpb: (loss * 600) / (550 * Math.LN2),
    items: 50,
    translation: {
      decoded: 50,
      exactMatch: 0.42,
      bleu,
      bleuSignature: SIG('13a'),
      chrf: bleu + 20,
      chrfSignature: CHRF,
      decoding: { strategy: 'beam', beam: 4, lengthPenalty: 0.6 },
    },
  };
}

function withBytes(
  r: RunState,
  id: string,
  name: string,
  tokenizer: NonNullable<RunState['run']['tokenizer']>,
  bytesPerToken: number,
  shift: number,
  evaluations: EvaluationRecord[],
): RunState {
  return {
    ...r,
    run: { ...r.run, id, name, runDir: id, tokenizer },
    steps: r.steps.map((s) => ({ ...s, loss: s.loss + shift, bytes: s.tokens * bytesPerToken })),
    evals: r.evals.map((e) => ({ ...e, loss: e.loss + shift, bpb: (e.loss + shift) / (bytesPerToken * Math.LN2) })),
    evaluations,
  };
}

/** The char run: evaluations at steps 400 and 800 on the shared test file and one on its validation split. */
export const charRun = withBytes(enc, 'run-char', 'reverse-char', { type: 'char', vocabSize: 287 }, 1, 0, [
  pairsEvaluation(400, '2025-03-01T10:00:00.000Z', 0.9, 21.5),
  {
    ...pairsEvaluation(600, '2025-03-01T10:30:00.000Z', 0.5, 0),
    data: 'validation',
    files: [],
    dataHash: 'b2'.repeat(32),
    source: "the run's validation split",
    translation: null,
  },
  pairsEvaluation(800, '2025-03-01T11:00:00.000Z', 0.4, 48.25),
]);

/** The BPE run: one evaluation on the same test file. */
export const bpeRun = withBytes(enc, 'run-bpe', 'reverse-bpe', { type: 'bpe', vocabSize: 1000 }, 3, 0.8, [
  pairsEvaluation(800, '2025-03-02T09:00:00.000Z', 1.2, 30.75),
]);

/** Both runs, the char run selected. */
export const evaluatedLoad = { type: 'dashboard/didLoadRuns', runs: [charRun, bpeRun], selectedId: charRun.run.id };
