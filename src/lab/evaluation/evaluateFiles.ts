/**
 * Evaluation of a trained run on test files it never saw: the one implementation behind the
 * CLI's `eval --data/--pairs` and the extension's "Evaluate on Files…" (in the model worker).
 *
 * Documents (decoder-only runs): every document becomes BOS + text + EOS in one token stream,
 * as training builds its streams (lab/data/dataset.ts `tokenStream`). The stream is cut into
 * non-overlapping windows of the model's context from token 0 — the windows the validation
 * loss uses — plus one shorter window for the remainder, so every token after the first BOS
 * is predicted exactly once, from the tokens before it in its window. The loss is the
 * token-weighted mean negative log-likelihood in nats (no dropout, no label smoothing), so it
 * compares directly with the run's validation loss; bits per byte (bitsPerByte.ts) compares it
 * with runs of other tokenizers.
 *
 * Pairs (encoder-decoder runs): the loss over every pair that fits the context,
 * teacher-forced as validation does (decoder input BOS + target, targets target + EOS), and
 * exact match, sacreBLEU's corpus BLEU and chrF of decodes (greedy, or beam search) of the
 * first `maxPairs` of them (evaluate.ts `scorePairs`).
 *
 * Every evaluation is appended to the run's evaluations.jsonl (evaluations.ts) with its test
 * files' sizes and hashes; `hypothesesFile` also gets the decodes, one per line, in test order.
 *
 * Leaves out: sliding-window scoring (every token with a full context, as Score Selection
 * does; it costs a forward pass per half window) and streaming the files (they are read
 * whole, within the size limits of lab/data/corpus.ts).
 */

import { EngineError } from '../../engine/errors';
import type { BleuTokenize, EvalDecoding, EvaluatedFile, EvaluationRecord } from '../../protocol/evaluation';
import type { EvalFilesData, EvalFilesOutput } from '../../protocol/modelWorker';
import type { Corpus } from '../data/corpus';
import { collectFromPaths } from '../data/corpus';
import type { LabFs } from '../files/labFs';
import { shownPath } from '../files/slashPaths';
import { pairBatch, tokenStream, tokenizePairs } from '../data/dataset';
import type { Pair } from '../data/pairs';
import { readPairs } from '../data/pairs';
import type { OpenRun } from '../inference/openRun';
import { ByteCounter, bitsPerByte } from './bitsPerByte';
import { GREEDY, scorePairs } from './evaluate';
import type { MeasuredEvaluation } from '../runs/evaluations';
import { dataHashOf, describeFile, recordEvaluation } from '../runs/evaluations';
import type { TextLoss } from './testLoss';
import { Progress, meanLoss, scoringWindows, windowBatch } from './testLoss';
import { countUnseenChars, refuseUnseenChars } from '../inference/unseenChars';

export { EvaluationCancelled, scoringWindows } from './testLoss';
export type { WindowGroup } from './testLoss';

/** Pairs decoded for exact match, BLEU and chrF unless the caller says otherwise. */
export const DEFAULT_MAX_PAIRS = 1000;

/** Options of {@link evaluateFiles}. */
export interface EvaluateFilesOptions {
  /** Most pairs to decode for exact match, BLEU and chrF (≥ 1). */
  readonly maxPairs: number;
  /** How to decode them (default greedy). */
  readonly decoding?: EvalDecoding;
  /** BLEU's tokenizer (default: the one the references' language calls for). */
  readonly tokenize?: BleuTokenize | null;
  /** Writes the decodes here, one per line in test order (pairs only). */
  readonly hypothesesFile?: string;
  /** Called after each scored batch and each decoded pair. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Hears the result before it is recorded (a command prints it): a refused record loses nothing. */
  readonly onResult?: (result: EvalFilesOutput) => void;
  /** Polled before each batch and decode; true stops the evaluation with {@link EvaluationCancelled}. */
  readonly cancelled?: () => boolean;
  /**
   * Reads the documents globs name (`data.glob`): the command line's globbing
   * (lab/data/globFiles.node.ts `collectDocuments`). Without it only exact paths are taken.
   */
  readonly collectGlobs?: (
    patterns: readonly string[],
    opts: { readonly cwd: string; readonly maxFileBytes?: number; readonly maxTotalBytes?: number },
  ) => Promise<Corpus>;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Refuses test data of the wrong kind for the run, saying which kind it takes. */
function checkKind(r: OpenRun, kind: EvalFilesData['kind']): void {
  const encdec = r.model.config.kind === 'encoder-decoder';
  if (encdec && kind === 'documents') {
    throw new EngineError(
      'input/invalid',
      'This run is an encoder-decoder, trained on source→target pairs: evaluate it on test pairs ' +
        '(--pairs SRC TGT, or a .tsv / .jsonl file), not on documents.',
    );
  }
  if (!encdec && kind === 'pairs') {
    throw new EngineError(
      'input/invalid',
      'This run is a decoder-only language model, trained on documents: evaluate it on text files ' +
        '(--data GLOB…), not on source→target pairs.',
    );
  }
}

/** What both kinds of test data share in the output, before the record is added. */
type Measured = Omit<EvalFilesOutput, 'record'>;

function lossFields(l: TextLoss): Pick<Measured, 'loss' | 'ppl' | 'tokens' | 'bytes' | 'bpb'> {
  return {
    loss: l.loss,
    ppl: Math.exp(l.loss),
    tokens: l.tokens,
    bytes: l.bytes,
    bpb: bitsPerByte(l.loss, l.tokens, l.bytes),
  };
}

function evaluateDocuments(r: OpenRun, corpus: Corpus, opts: EvaluateFilesOptions): Measured {
  const texts = corpus.documents.map((d) => d.text);
  const unseen = countUnseenChars(texts, r.tok);
  refuseUnseenChars(unseen);
  const stream = tokenStream(texts, r.tok);
  const T = r.model.maxLen;
  const groups = scoringWindows(stream.length, T, r.model.maxBatch);
  const l = meanLoss(
    r.model,
    groups.length,
    (i) => windowBatch(stream, groups[i] as (typeof groups)[number]),
    new ByteCounter(r.tok, r.model.padId),
    new Progress(groups.length, opts),
  );
  return {
    kind: 'documents',
    source: `${plural(corpus.documents.length, 'document')} under ${shownPath(corpus.root)}`,
    step: r.step,
    context: T,
    ...lossFields(l),
    documents: corpus.documents.length,
    pairs: 0,
    pairsTooLong: 0,
    sourcesCut: 0,
    translation: null,
    bleuTokenizeReason: null,
    hypotheses: [],
    skipped: corpus.skipped,
    characters: unseen.characters,
    unseenChars: unseen.unseen,
    unseenExamples: unseen.examples,
  };
}

/**
 * The first pairs of the test file, in its order, as the decoder takes them: every one is
 * decoded (so the hypotheses line up with the references, line for line), a source longer
 * than the encoder's context cut to its first tokens and EOS; `cut` counts those.
 */
function decodable(
  pairs: readonly Pair[],
  r: OpenRun,
): { toDecode: { src: Int32Array; tgtText: string }[]; cut: number } {
  const max = r.model.maxSrcLen;
  const eos = r.tok.specialIds.eos;
  let cut = 0;
  const toDecode = pairs.map((p) => {
    let src = r.tok.encode(p.src, { eos: true });
    if (src.length > max) {
      cut++;
      src = Int32Array.of(...src.subarray(0, max - 1), eos);
    }
    return { src, tgtText: p.tgt };
  });
  return { toDecode, cut };
}

function evaluatePairs(r: OpenRun, pairs: readonly Pair[], source: string, opts: EvaluateFilesOptions): Measured {
  const unseen = countUnseenChars(
    pairs.flatMap((p) => [p.src, p.tgt]),
    r.tok,
  );
  refuseUnseenChars(unseen);
  const limit = Math.min(r.model.maxLen, r.model.maxSrcLen);
  const { examples, dropped } = tokenizePairs(pairs, r.tok, limit);
  if (examples.length === 0) {
    throw new EngineError(
      'input/invalid',
      `All ${plural(pairs.length, 'test pair')} are too long for the model's context of ${limit} ` +
        `tokens (source + EOS and BOS + target must each fit); ` +
        'evaluate on shorter pairs, or retrain with a longer context (--seq).',
    );
  }
  const rows = r.model.maxBatch;
  const batches = Math.ceil(examples.length / rows);
  const { toDecode, cut } = decodable(pairs.slice(0, opts.maxPairs), r);
  const progress = new Progress(batches + toDecode.length, opts);
  const l = meanLoss(
    r.model,
    batches,
    (i) => pairBatch(examples.slice(i * rows, (i + 1) * rows), r.tok.specialIds),
    new ByteCounter(r.tok, r.model.padId),
    progress,
  );
  progress.check();
  const scored = scorePairs(r.model, r.tok, toDecode, {
    decoding: opts.decoding ?? GREEDY,
    tokenize: opts.tokenize ?? null,
    onPair: () => {
      progress.tick();
      progress.check();
    },
  });
  const { hypotheses, tokenize: _tokenize, tokenizeReason, ...translation } = scored;
  return {
    kind: 'pairs',
    source,
    step: r.step,
    context: limit,
    ...lossFields(l),
    documents: 0,
    pairs: examples.length,
    pairsTooLong: dropped,
    sourcesCut: cut,
    translation,
    bleuTokenizeReason: tokenizeReason,
    hypotheses: [...hypotheses],
    skipped: [],
    characters: unseen.characters,
    unseenChars: unseen.unseen,
    unseenExamples: unseen.examples,
  };
}

/** What evaluations.jsonl records of a measured evaluation on `files`. */
async function measuredOf(m: Measured, files: readonly EvaluatedFile[]): Promise<MeasuredEvaluation> {
  return {
    step: m.step,
    data: m.kind,
    source: m.source,
    files: [...files],
    dataHash: await dataHashOf(files),
    loss: m.loss,
    ppl: m.ppl,
    tokens: m.tokens,
    bytes: m.bytes,
    bpb: m.bpb,
    items: m.kind === 'documents' ? m.documents : m.pairs,
    translation: m.translation,
  };
}

/**
 * Evaluates the run `r` on test files: documents for a decoder-only run, pairs for an
 * encoder-decoder (see the file comment for what is measured), writes the hypotheses when
 * asked and appends the evaluation to the run's evaluations.jsonl. Throws
 * `EngineError('input/invalid')`, with one line saying what to do, for test data of the wrong
 * kind, files that do not match or cannot be read, unequal pair files, more than 5% of
 * characters unseen by a char tokenizer, or pairs all longer than the context;
 * {@link EvaluationCancelled} when `opts.cancelled` says stop; DiskFullError when the
 * hypotheses or the record do not fit on the disk.
 */
export async function evaluateFiles(
  fs: LabFs,
  r: OpenRun,
  data: EvalFilesData,
  opts: EvaluateFilesOptions,
): Promise<EvalFilesOutput> {
  checkKind(r, data.kind);
  if (!Number.isInteger(opts.maxPairs) || opts.maxPairs < 1) {
    throw new EngineError(
      'input/invalid',
      `The number of pairs to decode must be a whole number ≥ 1; got ${opts.maxPairs}.`,
    );
  }
  let measured: Measured;
  let files: EvaluatedFile[];
  if (data.kind === 'documents') {
    const limits = { maxFileBytes: data.maxFileBytes, maxTotalBytes: data.maxTotalBytes };
    if (data.glob && !opts.collectGlobs)
      throw new EngineError('input/invalid', 'Globs are not expanded here; name the test files themselves.');
    const corpus =
      data.glob && opts.collectGlobs
        ? await opts.collectGlobs(data.paths, { cwd: data.cwd, ...limits })
        : await collectFromPaths(fs, data.paths, data.cwd, limits);
    measured = evaluateDocuments(r, corpus, opts);
    files = await Promise.all(corpus.documents.map((d) => describeFile(fs, d.abs)));
  } else {
    const pairs = await readPairs(fs, data.source, data.target);
    const names =
      data.target === null ? shownPath(data.source) : `${shownPath(data.source)} → ${shownPath(data.target)}`;
    measured = evaluatePairs(r, pairs, `${names} (${plural(pairs.length, 'pair')})`, opts);
    files = await Promise.all(
      [data.source, ...(data.target === null ? [] : [data.target])].map((f) => describeFile(fs, f)),
    );
  }
  const onRecord = opts.onResult && ((record: EvaluationRecord): void => opts.onResult?.({ ...measured, record }));
  const record = await recordEvaluation(fs, r.runDir, await measuredOf(measured, files), measured.hypotheses, {
    ...opts,
    ...(onRecord ? { onRecord } : {}),
  });
  return { ...measured, record };
}
