/**
 * A run's data as its TrainSpec describes it: documents streamed and tokenized
 * (documentData.ts), pairs read or a task generated and split (seeded), a sequence task by
 * name; the tokenizer trained on it for a new run; the batched dataset; and the summary people
 * see. Training, evaluation on the validation split, head ablation and the CLI's samples read
 * a run's data through it.
 *
 * Leaves out: the model a spec describes (runs/specModel.ts) and a run's tokenizer.json
 * (runs/tokenizerFile.ts).
 */

import { EngineError } from '../../engine/errors';
import { formatCount } from '../../common/format';
import { trainBpeTokenizer } from '../../engine/tokenizers/bpeTokenizer';
import { trainCharTokenizer } from '../../engine/tokenizers/charTokenizer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { DataSummary, TaskName, TrainSpec } from '../../protocol/data';
import { TASK_MODEL_KINDS } from '../../protocol/data';
import type { LabFs } from '../files/labFs';
import { shownPath } from '../files/slashPaths';
import type { Dataset } from './dataset';
import { documentDataset, pairDataset, tokenizePairs } from './dataset';
import type { DocumentData, WorkHooks } from './documentData';
import { loadDocumentData } from './documentData';
import { readPairs } from './pairs';
import { seededPermutation } from './seededHash';
import { INDUCTION_ALPHABET, inductionDataset, inductionPrompts } from './inductionTask';
import { EQUALS, modularAlphabet, modularDataset, modularTask, numberText } from './modularTask';
import { splitTaskData, taskInfo } from './tasks';

/** Source→target text of a run (pairs files or a generated task), before tokenization. */
export interface PairsText {
  readonly trainPairs: readonly { src: string; tgt: string }[];
  readonly valPairs: readonly { src: string; tgt: string }[];
  readonly description: string;
  readonly documents: number;
  readonly bytes: number;
  readonly validation: { readonly kind: 'pairs' | 'task'; readonly text: string };
}

/**
 * A decoder-only generated task (`induction`, `modular-addition`): sequences are drawn per step or fixed by the seed,
 * so only its description is held.
 */
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
  if (spec.data.kind === 'task' && spec.data.task === 'modular-addition') return modularData(spec, tok);
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

/** The modular-addition task's data: its own character tokenizer (the numbers and '='), the split by the seed. */
function modularData(spec: TrainSpec, tok: Tokenizer | null): RunData {
  const t = tok ?? trainCharTokenizer([modularAlphabet()], {});
  const task = modularTask(t, spec.training.seed);
  const info = taskInfo('modular-addition');
  return {
    kind: 'sequences',
    tok: t,
    seq: {
      task: 'modular-addition',
      description: `task ${info.description}`,
      prompts: Array.from(task.test.subarray(0, 3), (pair) => {
        const { p } = task;
        return `${numberText(Math.floor(pair / p))}${numberText(pair % p)}${EQUALS}`;
      }),
      validation: {
        kind: 'task',
        text:
          `the ${count(task.test.length)} pairs the training never sees (every pair not among the ` +
          `${count(task.train.length)} trained)`,
      },
    },
  };
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
  if (data.kind === 'sequences' && data.seq.task === 'modular-addition')
    return { dataset: modularDataset(modularTask(data.tok, seed), seed, rows), dropped: 0 };
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
