/**
 * The data of a run that more than one channel carries (training worker, model worker,
 * dashboard) and run.json stores: what defines a run (TrainSpec), where its data comes from,
 * the files left out and why, its schedule segments, progress and metrics. Each shape is
 * declared once as a schema (schema.ts); its type is inferred from it.
 *
 * Leaves out: the model's config, sizes, snapshots and decodes (model.ts), and the messages
 * (trainingWorker.ts, modelWorker.ts, webview.ts).
 */

import type { Infer } from './schema';
import {
  arrayOf,
  bool,
  define,
  fail,
  finiteOrNaN,
  int,
  nonNegInt,
  nullable,
  num,
  obj,
  oneOf,
  optional,
  posInt,
  ProtocolError,
  record,
  refine,
  str,
  variants,
} from './schema';

/** A JSON value. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** An engine error as data (code + message that says what to do). */
export type ErrorData = Infer<typeof errorData>;
export const errorData = obj({ code: str, message: str });

/*
 * The names people choose among, declared once here (CONTRIBUTING.md, "Declare once"): the
 * CLI's flags and help, the settings' validation and the validators derive from these lists,
 * package.json's enums are compared with them (test/unit/extension/configure/settings.test.ts), and the engine's
 * implementations with them (test/unit/protocol/trainingWorker.test.ts). They live in the
 * protocol because every layer may import it; the engine, which imports nothing, keeps its own
 * types.
 */

/**
 * The model presets of each model kind (their sizes: src/engine/config.ts `presetConfig`).
 * The keys are the model kinds: decoder-only (GPT-style, on documents) and encoder-decoder
 * (the paper's, on source→target pairs).
 */
export const MODEL_PRESETS = {
  'decoder-only': ['tiny', 'small', 'gpt', 'llama-tiny', 'llama-small', 'nanochat-tiny', 'nanochat-small'],
  'encoder-decoder': ['tiny', 'small', 'base'],
} as const;

/** Which architecture: a GPT-style decoder-only model or the paper's encoder-decoder. */
export type ModelKind = keyof typeof MODEL_PRESETS;
/** The model kinds, in the order people are offered them. */
export const MODEL_KINDS = Object.keys(MODEL_PRESETS) as readonly ModelKind[];
export const modelKind = oneOf(...MODEL_KINDS);

/** A preset of some model kind. */
export type PresetName = (typeof MODEL_PRESETS)[ModelKind][number];
/** Every preset name, each once, in the order of {@link MODEL_PRESETS}. */
export const PRESET_NAMES: readonly PresetName[] = [...new Set(MODEL_KINDS.flatMap((k) => MODEL_PRESETS[k]))];

/** The tokenizer types: one token per character, or byte-level BPE trained on the data. */
export const TOKENIZER_TYPES = ['char', 'bpe'] as const;
/** A tokenizer type. */
export type TokenizerType = (typeof TOKENIZER_TYPES)[number];

/**
 * The optimizer presets (src/lab/runs/specModel.ts builds them): `adamw` is AdamW with a
 * cosine decay; `paper` is the paper's Adam (0.9, 0.98, 1e-9) with its warm-up schedule;
 * `muon` is Muon (lr 0.02, momentum 0.95) for the hidden matrices with `adamw`'s AdamW for
 * embeddings, the output projection, norms and biases (nanochat, modded-nanogpt).
 */
export const OPTIMIZER_PRESETS = ['adamw', 'paper', 'muon'] as const;
/** An optimizer preset. */
export type OptimizerPreset = (typeof OPTIMIZER_PRESETS)[number];

/**
 * The learning-rate schedules a run of `adamw` or `muon` chooses among: `cosine` (warm-up, then
 * cosine decay to lr/10), `wsd` (warm-up, the peak held, then a linear decay to lr/10 over
 * the last 20% of the steps) and `constant` (warm-up, then the peak held). The `paper` optimizer has
 * its own schedule.
 */
export const LR_SCHEDULES = ['cosine', 'wsd', 'constant'] as const;
/** A learning-rate schedule a run chooses. */
export type LrSchedule = (typeof LR_SCHEDULES)[number];

/** The decode strategies (src/engine/decode/): greedy, beam search, sampling. */
export const DECODE_STRATEGIES = ['greedy', 'beam', 'sample'] as const;
/** A decode strategy. */
export type DecodeStrategy = (typeof DECODE_STRATEGIES)[number];

/**
 * The kernel backends a run can ask for: `auto` is wasm where the runtime has WebAssembly SIMD, else
 * reference; `webgpu` trains on a GPU (only by name), where the model worker also decodes and reads its run.
 */
export const BACKEND_KINDS = ['auto', 'wasm', 'reference', 'webgpu'] as const;
/** A kernel backend a run can ask for. */
export type BackendKind = (typeof BACKEND_KINDS)[number];

/**
 * The training engines: `builtin` is ours (TypeScript and WebAssembly, on this machine's CPU;
 * its kernels are one of {@link BACKEND_KINDS}); `pytorch` hands the prepared run folder to
 * PyTorch through torchrun (GPUs, many processes, many machines; src/lab/pytorch/). A run moves
 * between them through its checkpoint files. No engine shares a name with a backend.
 */
export const ENGINE_KINDS = ['builtin', 'pytorch'] as const;
/** A training engine. */
export type EngineKind = (typeof ENGINE_KINDS)[number];

/** Engine names of earlier versions, each with the engine it names now (`builtin` was called `wasm`). */
export const OLD_ENGINE_NAMES: Readonly<Record<string, EngineKind>> = { wasm: 'builtin' };

/**
 * The engine a setting or flag value names, old names included: `renamed` is set when the
 * value is an old name (the caller says so once, in one line); null when it names no engine.
 */
export function engineNamed(value: unknown): { engine: EngineKind; renamed: boolean } | null {
  if (typeof value !== 'string') return null;
  if ((ENGINE_KINDS as readonly string[]).includes(value)) return { engine: value as EngineKind, renamed: false };
  const now = Object.hasOwn(OLD_ENGINE_NAMES, value) ? OLD_ENGINE_NAMES[value] : undefined;
  return now ? { engine: now, renamed: true } : null;
}

/**
 * The one-line notice for an old engine name given as `what` (a flag or a setting's key),
 * ending with `todo`, what to write instead: '--engine "wasm" is now "builtin" (wasm names
 * a kernel backend); training with builtin: write --engine builtin.'
 */
export function oldEngineNotice(what: string, old: string, now: EngineKind, todo: string): string {
  return `${what} "${old}" is now "${now}" (${old} names a kernel backend); training with ${now}: ${todo}.`;
}

/** Where the PyTorch engine trains: `auto` is CUDA when torch sees a GPU, else the CPU. */
export const TORCH_DEVICES = ['auto', 'cpu', 'cuda'] as const;
/** A device of the PyTorch engine. */
export type TorchDevice = (typeof TORCH_DEVICES)[number];

/** How the PyTorch engine runs a session (not part of the run: a run moves between engines). */
export type PytorchOptions = Infer<typeof pytorchOptions>;
export const pytorchOptions = obj({
  /** The Python interpreter (a path, or a name on PATH such as python3). */
  python: str,
  /** Processes on this machine (torchrun's --nproc_per_node); 1 runs the trainer directly. */
  nproc: posInt,
  /** Micro-batches per process and step (gradient accumulation: a batch larger than a GPU holds). */
  accumulate: posInt,
  device: oneOf(...TORCH_DEVICES),
  /** bf16 autocast (CUDA only). */
  bf16: bool,
  /** The folder holding the shipped trainer package (attention_lab_trainer/). */
  trainerDir: str,
});

/**
 * The built-in generated tasks, each with the model kind it trains: source→target tasks
 * for the encoder-decoder; `induction` (random tokens, a repeated segment) for the
 * decoder-only model, which grows induction heads on it; `modular-addition` (a + b mod p, the
 * grokking task of Power et al. 2022 and Nanda et al. 2023) for the decoder-only model.
 */
export const TASK_MODEL_KINDS = {
  copy: 'encoder-decoder',
  reverse: 'encoder-decoder',
  sort: 'encoder-decoder',
  addition: 'encoder-decoder',
  dates: 'encoder-decoder',
  induction: 'decoder-only',
  'modular-addition': 'decoder-only',
} as const satisfies Record<string, ModelKind>;
/** A built-in generated task. */
export type TaskName = keyof typeof TASK_MODEL_KINDS;
export const taskName = oneOf(...(Object.keys(TASK_MODEL_KINDS) as TaskName[]));
export const TASK_NAMES: readonly TaskName[] = taskName.values;
/** The source→target tasks (encoder-decoder). */
export const PAIR_TASK_NAMES: readonly TaskName[] = TASK_NAMES.filter((t) => TASK_MODEL_KINDS[t] === 'encoder-decoder');

/** Where training data comes from. */
export type DataSpec = Infer<typeof dataSpec>;
export const dataSpec = variants('kind', {
  task: { task: taskName },
  documents: {
    files: arrayOf(str),
    root: str,
    /** Largest file read, in bytes (absent in runs made before limits were settings: the defaults then). */
    maxFileBytes: optional(posInt),
    /** Largest total read, in bytes. */
    maxTotalBytes: optional(posInt),
    /** Skip lockfiles, vendored folders, minified and generated files (default true). */
    skipGenerated: optional(bool),
  },
  pairs: { source: str, target: nullable(str) },
});

/** A `--set key=value` override: a string (parsed by the field's type), number or boolean. */
const primitive = define<string | number | boolean>((v, p) => {
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
    fail(p, 'a string, number or boolean', v);
});

/** Everything that defines a run; saved in run.json. */
export type TrainSpec = Infer<typeof trainSpec>;
export const trainSpec = obj({
  model: obj({
    kind: modelKind,
    /** One of MODEL_PRESETS[kind] (the engine checks the pair when it builds the config). */
    preset: oneOf(...PRESET_NAMES),
    /** Config fields to override (`--set key=value`). */
    overrides: record(primitive),
  }),
  tokenizer: obj({
    type: oneOf(...TOKENIZER_TYPES),
    vocabSize: posInt,
    /** The tokenizer has a chat template (a model imported with one): decodes may wrap the prompt in it. */
    chatTemplate: optional(bool),
  }),
  data: dataSpec,
  training: obj({
    steps: posInt,
    /** Sequences per batch (decoder-only) or the target-token budget per batch (pairs). */
    batchSize: posInt,
    /** Context length for documents; longest sequence kept for pairs. */
    seqLen: posInt,
    evalEvery: nonNegInt,
    checkpointEvery: nonNegInt,
    /** Attention snapshot of the probe sample every N steps (0 = off). */
    snapshotEvery: nonNegInt,
    seed: int,
    optimizer: oneOf(...OPTIMIZER_PRESETS),
    /** Peak learning rate (adamw, muon's AdamW part) or factor of the paper's schedule (paper); 0 = default. */
    lr: num,
    warmup: nonNegInt,
    /** The schedule of adamw and muon; absent = cosine (run.json files written before it existed). */
    schedule: optional(oneOf(...LR_SCHEDULES)),
  }),
  backend: oneOf(...BACKEND_KINDS),
});

/**
 * How the learning rate runs over one segment of a run (the formulas are in
 * src/engine/optim/schedule.ts): `cosine` (AdamW: warm-up, then cosine decay to lr/10),
 * `constant` (AdamW on runs too short to decay), `noam` (the paper's schedule), `restart`
 * (a warm restart: warm up from lr/10 back to lr, then cosine down to lr/10 again), `wsd`
 * (warm-up, the peak held, a linear decay to lr/10 over the segment's last 20%; a later
 * segment warms up again from lr/10).
 */
export type SegmentSchedule = Infer<typeof segmentSchedule>;
export const segmentSchedule = oneOf('cosine', 'constant', 'noam', 'restart', 'wsd');
export const SEGMENT_SCHEDULES: readonly SegmentSchedule[] = segmentSchedule.values;

/**
 * Steps fromStep+1 … toStep of a run and the schedule they follow. A run's segments are
 * contiguous from step 0: the first is its original plan, each later one an extension with
 * more steps (`train --resume DIR --steps N`, "Continue Training…").
 */
export type RunSegment = Infer<typeof runSegment>;
export const runSegment = obj({ fromStep: nonNegInt, toStep: posInt, schedule: segmentSchedule });

/** A run's segments: at least one, contiguous from step 0, none empty. */
export const runSegments = refine(arrayOf(runSegment), (segments, p) => {
  if (segments.length === 0) fail(p, 'at least one segment', segments);
  let from = 0;
  segments.forEach((s, i) => {
    if (s.fromStep !== from)
      throw new ProtocolError(
        `${p}[${i}].fromStep: expected ${from} ` +
          `(${i === 0 ? 'the first segment starts at step 0' : 'where the segment before ends'}), got ${s.fromStep}`,
      );
    if (s.toStep <= s.fromStep)
      throw new ProtocolError(`${p}[${i}].toStep: expected more than fromStep ${s.fromStep}, got ${s.toStep}`);
    from = s.toStep;
  });
});

/** Why a file was left out of a corpus, in the order people read them. */
export type SkipReason = Infer<typeof skipReason>;
export const skipReason = oneOf(
  'binary',
  'not-utf8',
  'too-large',
  'over-total',
  'empty',
  'unreadable',
  'ignored',
  'lockfile',
  'vendored',
  'minified',
  'generated',
);
/** Every skip reason, in the order people read them. */
export const SKIP_REASONS: readonly SkipReason[] = skipReason.values;

/** One file left out of a corpus, and why. */
export type SkippedFile = Infer<typeof skippedFile>;
export const skippedFile = obj({
  path: str,
  reason: skipReason,
  /** The file's size in bytes, where it matters (too large, past the total). */
  bytes: optional(nonNegInt),
});

/** Each skip reason, for people. */
export const SKIP_REASON_TEXT: { readonly [R in SkipReason]: string } = {
  binary: 'binary',
  'not-utf8': 'not UTF-8',
  'too-large': 'too large',
  'over-total': 'past the total size limit',
  empty: 'empty',
  unreadable: 'unreadable',
  ignored: 'ignored by .gitignore',
  lockfile: 'lockfile',
  vendored: 'in a vendored or build folder',
  minified: 'minified',
  generated: 'generated',
};

/** "2 binary, 1 ignored by .gitignore": skipped files counted by reason. */
export function summarizeSkipped(skipped: readonly SkippedFile[]): string {
  const counts = new Map<SkipReason, number>();
  for (const f of skipped) counts.set(f.reason, (counts.get(f.reason) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} ${SKIP_REASON_TEXT[reason]}`).join(', ');
}

/**
 * How validation was held out: whole documents, the last 10% of each document's text (few
 * documents), a seeded share of pairs, generated pairs of a task — or nothing, when the data
 * is too small to hold any out (the "validation" curve is then the training loss, and says so).
 */
export type ValidationKind = Infer<typeof validationKind>;
export const validationKind = oneOf('documents', 'tail', 'pairs', 'task', 'none');

/** What a run is training on, for people. */
export type DataSummary = Infer<typeof dataSummary>;
export const dataSummary = obj({
  description: str,
  documents: nonNegInt,
  bytes: nonNegInt,
  trainTokens: nonNegInt,
  valTokens: nonNegInt,
  skipped: arrayOf(skippedFile),
  /** How validation was held out, and a line saying so (absent in runs made before it was recorded). */
  validation: optional(obj({ kind: validationKind, text: str })),
  /** Up to three short beginnings of held-out text, for samples and prompts. */
  prompts: optional(arrayOf(str)),
});

/** Progress of the work before the first step (reading, tokenizer training, encoding). */
export type PrepareProgress = Infer<typeof prepareProgress>;
export const prepareProgress = obj({
  phase: oneOf('read', 'tokenizer', 'encode'),
  /** Bytes of text done and in all (0 in all while unknown). */
  done: nonNegInt,
  total: nonNegInt,
  /** For people: "Encoding input.txt (char)". */
  message: str,
});

/** Metrics of one optimizer step (one line of metrics.jsonl); a NaN loss or norm is the runner's to report. */
export type StepMetrics = Infer<typeof stepMetrics>;
export const stepMetrics = obj({
  step: posInt,
  loss: finiteOrNaN,
  lr: num,
  gradNorm: finiteOrNaN,
  tokens: nonNegInt,
  tokensPerSec: num,
  elapsedMs: num,
  /**
   * UTF-8 bytes of text the step's scored targets stand for (bits per byte = loss · tokens / (bytes · ln 2)); absent in
   * older runs.
   */
  bytes: optional(nonNegInt),
});

/** The modular-addition task's progress measures at one validation (lab/evaluation/grokking.ts). */
export type GrokkingMetrics = Infer<typeof grokkingMetrics>;
export const grokkingMetrics = obj({
  trainLoss: num,
  trainAcc: num,
  testLoss: num,
  testAcc: num,
  /** ‖W_E projected on frequency k‖ for k = 1 … (p − 1) / 2 (the number tokens' embedding rows). */
  spectrum: arrayOf(num),
  /** The key frequencies (1-based k) the spectrum singles out at this step, largest first. */
  keyFreqs: arrayOf(nonNegInt),
  /** Loss on every pair with the logits kept only along the key frequencies (Nanda et al. 2023). */
  restrictedLoss: num,
  /** Loss on the training pairs with the key frequencies' directions removed from the logits. */
  excludedLoss: num,
});

/** Validation results at one step. */
export type EvalMetrics = Infer<typeof evalMetrics>;
export const evalMetrics = obj({
  step: nonNegInt,
  loss: num,
  ppl: num,
  exactMatch: nullable(num),
  bleu: nullable(num),
  /** Bits per UTF-8 byte of the validation text (absent in older runs; null when it has no bytes). */
  bpb: optional(nullable(num)),
  /** The modular-addition task's progress measures (absent for every other data). */
  grokking: optional(grokkingMetrics),
});

/** Validates a TrainSpec (e.g. read back from run.json); throws ProtocolError. */
export function validateTrainSpec(spec: unknown, where = 'spec'): TrainSpec {
  return trainSpec.check(spec, where);
}

/** Validates a run's schedule segments (e.g. read back from run.json); throws ProtocolError. */
export function validateRunSegments(v: unknown, where = 'segments'): readonly RunSegment[] {
  return runSegments.check(v, where);
}

/** Validates a line of metrics.jsonl. */
export function validateStepMetrics(v: unknown, where = 'metrics'): StepMetrics {
  return stepMetrics.check(v, where);
}
