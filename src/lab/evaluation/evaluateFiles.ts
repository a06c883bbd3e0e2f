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
 * compares directly with the run's validation loss.
 *
 * Pairs (encoder-decoder runs): the loss over every pair that fits the context,
 * teacher-forced as validation does (decoder input BOS + target, targets target + EOS), and
 * exact match and corpus BLEU of greedy decodes of the first `maxPairs` of them.
 *
 * Leaves out: sliding-window scoring (every token with a full context, as Score Selection
 * does; it costs a forward pass per half window), beam-search decodes, and streaming the
 * files (they are read whole, within the size limits of lab/data/corpus.ts).
 */

import { EngineError } from '../../engine/errors';
import type { Batch } from '../../engine/models/inputs';
import type { Transformer } from '../../engine/models/transformer';
import type { EvalFilesData, EvalFilesOutput } from '../../protocol/modelWorker';
import type { Corpus } from '../data/corpus';
import { collectDocuments, collectFromPaths } from '../data/corpus';
import { pairBatch, tokenStream, tokenizePairs } from '../data/dataset';
import { scorePairs } from './evaluate';
import type { OpenRun } from '../runs/openRun';
import type { Pair } from '../data/pairs';
import { readPairs } from '../data/pairs';
import { countUnseenChars, refuseUnseenChars } from './unseenChars';

/** Pairs decoded for exact match and BLEU unless the caller says otherwise. */
export const DEFAULT_MAX_PAIRS = 1000;

/** Options of {@link evaluateFiles}. */
export interface EvaluateFilesOptions {
  /** Most pairs to decode for exact match and BLEU (≥ 1). */
  readonly maxPairs: number;
  /** Called after each scored batch and each decoded pair. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Polled before each batch and decode; true stops the evaluation with {@link EvaluationCancelled}. */
  readonly cancelled?: () => boolean;
}

/** Thrown when {@link EvaluateFilesOptions.cancelled} said stop. */
export class EvaluationCancelled extends Error {
  constructor() {
    super('The evaluation was cancelled.');
    this.name = 'EvaluationCancelled';
  }
}

/** One group of equally long scoring windows: starts in the token stream, inputs `length` tokens each. */
export interface WindowGroup {
  readonly starts: readonly number[];
  readonly length: number;
}

/**
 * The scoring windows of a stream of `n` tokens with context `T`, in batches of up to
 * `rows`: inputs [s, s + T) and targets [s + 1, s + T + 1) for s = 0, T, 2T, …, the last
 * window cut to the stream's end, so targets 1 … n − 1 are each scored exactly once.
 */
export function scoringWindows(n: number, T: number, rows: number): WindowGroup[] {
  const full: number[] = [];
  let s = 0;
  for (; s + T <= n - 1; s += T) full.push(s);
  const groups: WindowGroup[] = [];
  for (let i = 0; i < full.length; i += rows) groups.push({ starts: full.slice(i, i + rows), length: T });
  if (s < n - 1) groups.push({ starts: [s], length: n - 1 - s });
  return groups;
}

/** Counts work done and stops when asked. */
class Progress {
  private done = 0;

  constructor(
    private readonly total: number,
    private readonly opts: EvaluateFilesOptions,
  ) {}

  /** Throws {@link EvaluationCancelled} if the caller cancelled. */
  check(): void {
    if (this.opts.cancelled?.()) throw new EvaluationCancelled();
  }

  tick(): void {
    this.done++;
    this.opts.onProgress?.(this.done, this.total);
  }
}

/** Token-weighted mean loss over `count` batches (no dropout, no label smoothing). */
function meanLoss(model: Transformer, count: number, batch: (i: number) => Batch, progress: Progress): { loss: number; tokens: number } {
  let sum = 0;
  let tokens = 0;
  for (let i = 0; i < count; i++) {
    progress.check();
    const out = model.forward(batch(i), { train: false, labelSmoothing: 0 });
    sum += out.loss * out.tokens;
    tokens += out.tokens;
    progress.tick();
  }
  return { loss: tokens ? sum / tokens : Number.NaN, tokens };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Refuses test data of the wrong kind for the run, saying which kind it takes. */
function checkKind(r: OpenRun, kind: EvalFilesData['kind']): void {
  const encdec = r.model.config.kind === 'encoder-decoder';
  if (encdec && kind === 'documents') {
    throw new EngineError('input/invalid', 'This run is an encoder-decoder, trained on source→target pairs: evaluate it on test pairs (--pairs SRC TGT, or a .tsv / .jsonl file), not on documents.');
  }
  if (!encdec && kind === 'pairs') {
    throw new EngineError('input/invalid', 'This run is a decoder-only language model, trained on documents: evaluate it on text files (--data GLOB…), not on source→target pairs.');
  }
}

function evaluateDocuments(r: OpenRun, corpus: Corpus, opts: EvaluateFilesOptions): EvalFilesOutput {
  const texts = corpus.documents.map((d) => d.text);
  const unseen = countUnseenChars(texts, r.tok);
  refuseUnseenChars(unseen);
  const stream = tokenStream(texts, r.tok);
  const T = r.model.maxLen;
  const groups = scoringWindows(stream.length, T, r.model.maxBatch);
  const { loss, tokens } = meanLoss(
    r.model,
    groups.length,
    (i) => {
      const g = groups[i] as WindowGroup;
      const B = g.starts.length;
      const input = new Int32Array(B * g.length);
      const targets = new Int32Array(B * g.length);
      g.starts.forEach((s, b) => {
        input.set(stream.subarray(s, s + g.length), b * g.length);
        targets.set(stream.subarray(s + 1, s + g.length + 1), b * g.length);
      });
      return { B, T: g.length, input, targets };
    },
    new Progress(groups.length, opts),
  );
  return {
    kind: 'documents',
    source: `${plural(corpus.documents.length, 'document')} under ${corpus.root}`,
    step: r.step,
    context: T,
    loss,
    ppl: Math.exp(loss),
    tokens,
    documents: corpus.documents.length,
    pairs: 0,
    pairsTooLong: 0,
    decoded: 0,
    exactMatch: null,
    bleu: null,
    skipped: corpus.skipped,
    characters: unseen.characters,
    unseenChars: unseen.unseen,
    unseenExamples: unseen.examples,
  };
}

function evaluatePairs(r: OpenRun, pairs: readonly Pair[], source: string, opts: EvaluateFilesOptions): EvalFilesOutput {
  const unseen = countUnseenChars(pairs.flatMap((p) => [p.src, p.tgt]), r.tok);
  refuseUnseenChars(unseen);
  const limit = Math.min(r.model.maxLen, r.model.maxSrcLen);
  const { examples, dropped } = tokenizePairs(pairs, r.tok, limit);
  if (examples.length === 0) {
    throw new EngineError(
      'input/invalid',
      `All ${plural(pairs.length, 'test pair')} are too long for the model's context of ${limit} tokens (source + EOS and BOS + target must each fit); ` +
        'evaluate on shorter pairs, or retrain with a longer context (--seq).',
    );
  }
  const rows = r.model.maxBatch;
  const batches = Math.ceil(examples.length / rows);
  const toDecode = examples.slice(0, opts.maxPairs);
  const progress = new Progress(batches + toDecode.length, opts);
  const { loss, tokens } = meanLoss(r.model, batches, (i) => pairBatch(examples.slice(i * rows, (i + 1) * rows), r.tok.specialIds), progress);
  progress.check();
  const decoded = scorePairs(r.model, r.tok, toDecode, () => {
    progress.tick();
    progress.check();
  });
  return {
    kind: 'pairs',
    source,
    step: r.step,
    context: limit,
    loss,
    ppl: Math.exp(loss),
    tokens,
    documents: 0,
    pairs: examples.length,
    pairsTooLong: dropped,
    decoded: toDecode.length,
    exactMatch: decoded.exactMatch,
    bleu: decoded.bleu,
    skipped: [],
    characters: unseen.characters,
    unseenChars: unseen.unseen,
    unseenExamples: unseen.examples,
  };
}

/**
 * Evaluates the run `r` on test files: documents for a decoder-only run, pairs for an
 * encoder-decoder (see the file comment for what is measured). Throws
 * `EngineError('input/invalid')`, with one line saying what to do, for test data of the wrong
 * kind, files that do not match or cannot be read, unequal pair files, more than 5% of
 * characters unseen by a char tokenizer, or pairs all longer than the context; and
 * {@link EvaluationCancelled} when `opts.cancelled` says stop.
 */
export async function evaluateFiles(r: OpenRun, data: EvalFilesData, opts: EvaluateFilesOptions): Promise<EvalFilesOutput> {
  checkKind(r, data.kind);
  if (!Number.isInteger(opts.maxPairs) || opts.maxPairs < 1) {
    throw new EngineError('input/invalid', `The number of pairs to decode must be a whole number ≥ 1; got ${opts.maxPairs}.`);
  }
  if (data.kind === 'documents') {
    const limits = { maxFileBytes: data.maxFileBytes, maxTotalBytes: data.maxTotalBytes };
    const corpus = data.glob ? await collectDocuments(data.paths, { cwd: data.cwd, ...limits }) : await collectFromPaths(data.paths, data.cwd, limits);
    return evaluateDocuments(r, corpus, opts);
  }
  const pairs = await readPairs(data.source, data.target);
  const files = data.target === null ? data.source : `${data.source} → ${data.target}`;
  return evaluatePairs(r, pairs, `${files} (${plural(pairs.length, 'pair')})`, opts);
}
