/**
 * Turns a TrainSpec into everything a run needs — data, tokenizer, dataset, model config —
 * for a new run (tokenizer trained and saved) or a resumed one (tokenizer and config read
 * back from the run folder, data rebuilt from the saved spec). Also the shared pieces the
 * CLI's eval/decode/score commands use to reopen a finished run. Documents stream through
 * lab/data/documentData.ts; pairs and tasks are small enough to hold as text.
 */

import type { Backend } from '../../engine/backend';
import { createBackend } from '../../engine/backends/select';
import type { ModelConfig } from '../../engine/config';
import { applyOverrides, presetConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import { formatCount } from '../../common/format';
import { Transformer } from '../../engine/models/transformer';
import { Optimizer } from '../../engine/optim/optimizer';
import type { OptimizerConfig } from '../../engine/optim/optimizerConfig';
import type { SegmentSchedule } from '../../engine/optim/schedule';
import { trainBpeTokenizer } from '../../engine/tokenizers/bpeTokenizer';
import { trainCharTokenizer } from '../../engine/tokenizers/charTokenizer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { parseTokenizerJSON } from '../../engine/tokenizers/tokenizerJson';
import type { DataSummary, RunSegment, TaskName, TrainSpec } from '../../protocol/data';
import { TASK_MODEL_KINDS } from '../../protocol/data';
import type { ParallelRunner } from '../../engine/backends/wasm/parallel';
import type { LabFs } from '../files/labFs';
import { exists, writeFile } from '../files/labFs';
import { learningRateUsed } from '../../common/learningRate';
import { shownPath } from '../files/slashPaths';
import type { Dataset } from '../data/dataset';
import { documentDataset, pairDataset, tokenizePairs } from '../data/dataset';
import type { DocumentData, WorkHooks } from '../data/documentData';
import { loadDocumentData } from '../data/documentData';
import { readPairs } from '../data/pairs';
import { checkMemory } from '../runs/memoryCheck';
import { RUN_FILES } from '../runs/runFolder';
import { seededPermutation } from '../data/seededHash';
import { planSegments, plannedWarmup, restartWarmup, segmentedSchedule } from '../runs/segments';
import { INDUCTION_ALPHABET, inductionDataset, inductionPrompts } from '../data/inductionTask';
import { splitTaskData, taskInfo } from '../data/tasks';
import { readCappedText } from '../files/fileCaps';

/** Source→target text of a run (pairs files or a generated task), before tokenization. */
export interface PairsText {
  readonly trainPairs: readonly { src: string; tgt: string }[];
  readonly valPairs: readonly { src: string; tgt: string }[];
  readonly description: string;
  readonly documents: number;
  readonly bytes: number;
  readonly validation: { readonly kind: 'pairs' | 'task'; readonly text: string };
}

/** A decoder-only generated task (`induction`): sequences are drawn per step, so only its description is held. */
export interface SequenceTask {
  readonly task: TaskName;
  readonly description: string;
  /** Beginnings of held-out sequences, for samples. */
  readonly prompts: readonly string[];
  readonly validation: { readonly kind: 'task'; readonly text: string };
}

/** A run's data, tokenized or ready to be: pairs as text, documents as token streams, a sequence task by name. */
export type RunData =
  | { readonly kind: 'pairs'; readonly tok: Tokenizer; readonly text: PairsText }
  | { readonly kind: 'documents'; readonly tok: Tokenizer; readonly docs: DocumentData }
  | { readonly kind: 'sequences'; readonly tok: Tokenizer; readonly seq: SequenceTask };

const VAL_FRACTION = 0.1;
const count = formatCount;

const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/** Reads or generates the pairs of a task or pairs spec. */
export async function loadPairsText(fs: LabFs, spec: TrainSpec): Promise<PairsText> {
  const d = spec.data;
  const seed = spec.training.seed;
  if (d.kind === 'task') {
    if (TASK_MODEL_KINDS[d.task] !== 'encoder-decoder')
      throw new EngineError(
        'input/invalid',
        `Task "${d.task}" trains a decoder-only model on sequences, not source→target pairs.`,
      );
    const info = taskInfo(d.task);
    const { train, val } = splitTaskData(d.task, info.trainPairs, info.valPairs, seed);
    return {
      trainPairs: train,
      valPairs: val,
      description: `task ${info.description}`,
      documents: train.length + val.length,
      bytes: 0,
      validation: { kind: 'task', text: `${count(val.length)} generated pairs the training never sees` },
    };
  }
  if (d.kind !== 'pairs') throw new Error('loadPairsText needs a task or pairs spec');
  const pairs = await readPairs(fs, d.source, d.target);
  const bytes = pairs.reduce((n, p) => n + utf8Length(p.src) + utf8Length(p.tgt), 0);
  const { train, val } = splitPairs(pairs, seed);
  const what = d.target ? `${fs.basename(d.source)} → ${fs.basename(d.target)}` : fs.basename(d.source);
  const n = pairs.length;
  return {
    trainPairs: train,
    valPairs: val,
    description: `pairs ${what} (${count(n)} ${n === 1 ? 'pair' : 'pairs'}) in ${shownPath(fs.dirname(d.source))}`,
    documents: n,
    bytes,
    validation: { kind: 'pairs', text: `${count(val.length)} of ${count(n)} pairs held out (seeded)` },
  };
}

/**
 * Reads a run's data and tokenizes it with `tok`, or trains the tokenizer the spec asks for
 * on the training part when `tok` is null. Documents stream with progress and cancellation
 * (documentData.ts); `need: 'validation'` skips encoding what only training uses.
 */
export async function loadRunData(
  fs: LabFs,
  spec: TrainSpec,
  tok: Tokenizer | null,
  hooks: WorkHooks & { need?: 'all' | 'validation' } = {},
): Promise<RunData> {
  if (spec.data.kind === 'documents') {
    const docs = await loadDocumentData(
      fs,
      spec.data,
      tok ?? { train: spec.tokenizer.type, vocabSize: spec.tokenizer.vocabSize },
      { ...hooks, seed: spec.training.seed },
    );
    return { kind: 'documents', tok: docs.tok, docs };
  }
  if (spec.data.kind === 'task' && TASK_MODEL_KINDS[spec.data.task] === 'decoder-only') {
    const t = tok ?? trainCharTokenizer([INDUCTION_ALPHABET], {});
    const info = taskInfo(spec.data.task);
    const prompts = inductionPrompts(t, spec.training.seed, spec.training.seqLen, 3);
    return {
      kind: 'sequences',
      tok: t,
      seq: {
        task: spec.data.task,
        description: `task ${info.description}`,
        prompts,
        validation: {
          kind: 'task',
          text:
            `${count(info.valPairs)} generated repeats the training never sees (the loss on the ` +
            `repeat; the training curve also counts the chains, whose random jumps keep it higher)`,
        },
      },
    };
  }
  const text = await loadPairsText(fs, spec);
  hooks.onProgress?.({
    phase: 'tokenizer',
    done: 0,
    total: 0,
    message: tok ? 'Tokenizing pairs' : `Training the ${spec.tokenizer.type} tokenizer`,
  });
  return { kind: 'pairs', tok: tok ?? trainTokenizer(spec, text), text };
}

/** A deterministic 90/10 split of pairs (at least one of each when there are two or more). */
function splitPairs<T>(pairs: readonly T[], seed: number): { train: T[]; val: T[] } {
  const order = seededPermutation(pairs.length, seed);
  const nVal = pairs.length >= 2 ? Math.max(1, Math.min(1000, Math.round(pairs.length * VAL_FRACTION))) : 0;
  return { train: order.slice(nVal).map((i) => pairs[i] as T), val: order.slice(0, nVal).map((i) => pairs[i] as T) };
}

/** Trains the tokenizer the spec asks for on the training pairs. */
export function trainTokenizer(spec: TrainSpec, text: PairsText): Tokenizer {
  const corpus = text.trainPairs.flatMap((p) => [p.src, p.tgt]);
  if (corpus.every((s) => s.length === 0))
    throw new EngineError('input/invalid', 'The training data has no text; check the files or pairs you passed.');
  return spec.tokenizer.type === 'bpe'
    ? trainBpeTokenizer(corpus, { vocabSize: spec.tokenizer.vocabSize })
    : trainCharTokenizer(corpus, {});
}

/** Reads a run's tokenizer.json. */
export async function readTokenizer(fs: LabFs, runDir: string): Promise<Tokenizer> {
  const file = fs.join(runDir, RUN_FILES.tokenizer);
  if (!(await exists(fs, file)))
    throw new EngineError('checkpoint/invalid', `${file} is missing; the run folder is incomplete — start a new run.`);
  const text = await readCappedText(fs, file, 'tokenizer.json');
  try {
    return parseTokenizerJSON(text);
  } catch (e) {
    if (EngineError.is(e)) throw new EngineError('checkpoint/invalid', `${file}: ${e.message}`, { cause: e });
    throw e;
  }
}

/** Saves a tokenizer into the run folder. */
export function writeTokenizer(fs: LabFs, runDir: string, tok: Tokenizer): Promise<void> {
  return writeFile(fs, fs.join(runDir, RUN_FILES.tokenizer), `${JSON.stringify(tok.toJSON())}\n`);
}

/** The model config of a spec for a tokenizer of `vocab` ids: preset, then context, then overrides. */
export function resolveConfig(spec: TrainSpec, vocab: number): ModelConfig {
  const kind = spec.model.kind;
  const preset = presetConfig(kind, spec.model.preset, vocab, kind === 'encoder-decoder' ? vocab : 0);
  return applyOverrides({ ...preset, maxLen: spec.training.seqLen }, spec.model.overrides);
}

/** Tokenized, batched data for a spec. */
export function buildDataset(spec: TrainSpec, data: RunData, maxLen: number): { dataset: Dataset; dropped: number } {
  const rows = spec.training.batchSize;
  const seed = spec.training.seed;
  if (data.kind === 'pairs') {
    const tr = tokenizePairs(data.text.trainPairs, data.tok, maxLen);
    const va = tokenizePairs(data.text.valPairs, data.tok, maxLen);
    if (tr.examples.length === 0) {
      throw new EngineError(
        'input/invalid',
        `Every training pair is longer than the context of ${maxLen} tokens; raise --seq (or --set ` +
          `maxLen=…) or use shorter pairs.`,
      );
    }
    return {
      dataset: pairDataset(tr.examples, va.examples, seed, rows, data.tok.specialIds),
      dropped: tr.dropped + va.dropped,
    };
  }
  if (data.kind === 'sequences') return { dataset: inductionDataset(data.tok, seed, rows, maxLen), dropped: 0 };
  const { train, val } = data.docs;
  if (train.length < 3 && val.length < 3)
    throw new EngineError(
      'input/invalid',
      'The documents hold too little text to train on (fewer than 3 tokens); add more files.',
    );
  // Loaded for validation only (eval): the held-out stream also gives the windows' shape.
  return { dataset: documentDataset(train.length >= 3 ? train : val, val, seed, rows, maxLen), dropped: 0 };
}

/**
 * The optimizer a spec asks for. 'paper' = Adam (0.9, 0.98, 1e-9) with warm-up; 'adamw' =
 * nanoGPT's AdamW + cosine. A run extended with more steps passes its `segments`: the first
 * keeps the schedule it was planned with, each later one continues it (segments.ts).
 */
export function optimizerConfig(
  spec: TrainSpec,
  cfg: ModelConfig,
  segments: readonly RunSegment[] = planSegments(spec),
): OptimizerConfig {
  const t = spec.training;
  // Planned from the first segment, so extending a run never changes the rates it trained with.
  const planned = (segments[0] as RunSegment).toStep;
  const warmup = plannedWarmup(spec, planned);
  if (t.optimizer === 'paper') {
    const factor = learningRateUsed(t);
    // `lr` is not used by the noam schedule; it holds the schedule's peak for display.
    const peak = factor * Math.pow(cfg.dModel, -0.5) * Math.pow(warmup, -0.5);
    const noam = { type: 'noam', warmup, dModel: cfg.dModel, factor } as const;
    return {
      type: 'adam',
      lr: peak,
      beta1: 0.9,
      beta2: 0.98,
      eps: 1e-9,
      weightDecay: 0,
      clipGradNorm: 0,
      schedule: segmentedSchedule(segments, () => noam),
    };
  }
  const lr = learningRateUsed(t);
  const minLr = lr / 10;
  const scheduleOf = (s: RunSegment): SegmentSchedule => {
    switch (s.schedule) {
      case 'cosine':
        return { type: 'cosine', warmup, maxSteps: s.toStep, minLr };
      case 'constant':
        return { type: 'constant', warmup: Math.min(warmup, planned - 1) };
      case 'restart':
        return { type: 'restart', start: s.fromStep, warmup: restartWarmup(warmup, s), maxSteps: s.toStep, minLr };
      case 'noam':
        throw new EngineError(
          'config/invalid',
          'A noam schedule segment needs the paper optimizer; this run uses adamw.',
        );
      default:
        return s.schedule satisfies never;
    }
  };
  return {
    type: 'adamw',
    lr,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
    clipGradNorm: 1,
    schedule: segmentedSchedule(segments, scheduleOf),
  };
}

/**
 * The padding id a model of `tok`'s vocabulary masks: PAD (0) in ours; −1 (none) in a
 * vocabulary without PAD, such as GPT-2's, where 0 is a real token.
 */
export function modelPadId(tok: Tokenizer): number {
  return tok.specialIds.pad < 0 ? -1 : tok.specialIds.pad;
}

/** A bound model (and optimizer) for a config and dataset shape, padding with `padId` (see {@link modelPadId}). */
export function buildModel(
  cfg: ModelConfig,
  dataset: Pick<Dataset, 'maxBatch' | 'maxLen' | 'maxSrcLen'>,
  backend: Backend,
  padId?: number,
): Transformer {
  const shape = {
    maxBatch: dataset.maxBatch,
    maxLen: Math.min(dataset.maxLen, cfg.maxLen),
    ...(cfg.kind === 'encoder-decoder' ? { maxSrcLen: Math.min(dataset.maxSrcLen, cfg.maxLen) } : {}),
    ...(padId === undefined ? {} : { padId }),
  };
  checkMemory(cfg, shape, backend, 'training');
  return new Transformer(cfg, shape).bind(backend);
}

/**
 * The backend the spec names. Training uses the cores the host offers: the wasm backend
 * gets `threads()`'s helpers (results are bit-identical to one thread).
 */
export function backendFor(kind: TrainSpec['backend'], threads: () => ParallelRunner | null): Backend {
  return kind === 'reference' ? createBackend(kind) : createBackend(kind, { runner: threads() });
}

/** Optimizer over a bound model. */
export function buildOptimizer(model: Transformer, cfg: OptimizerConfig): Optimizer {
  return new Optimizer(model.backendOrThrow(), model.params, model.grads, model.segments(), cfg);
}

/** The summary people see of a run's data. */
export function dataSummary(data: RunData, dataset: Dataset): DataSummary {
  const d =
    data.kind === 'pairs'
      ? { ...data.text, skipped: [], prompts: data.text.valPairs.slice(0, 3).map((p) => p.src) }
      : data.kind === 'sequences'
        ? { ...data.seq, documents: 0, bytes: 0, skipped: [] }
        : data.docs;
  return {
    description: d.description,
    documents: d.documents,
    bytes: d.bytes,
    trainTokens: dataset.trainTokens,
    valTokens: dataset.valTokens,
    skipped: d.skipped.slice(0, 200),
    validation: d.validation,
    prompts: d.prompts.slice(0, 3),
  };
}
