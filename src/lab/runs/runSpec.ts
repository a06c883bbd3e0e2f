/**
 * The TrainSpec a run's choices describe, filling in what the data brings by default: the one
 * rule `attention-lab train`, the benchmark and the extension's Train all call, so a built-in
 * task trains the same run from every front door. Also the default run of each built-in task
 * (steps, context, model fields), which `taskInfo` (lab/data/tasks.ts) reports.
 *
 * Pure and light on purpose (it imports only the protocol): the extension's activation
 * bundle uses it without loading the engine.
 *
 * Leaves out: checking choices against each other and the data (the CLI's usage errors, the
 * settings' `mismatch`), and the model config itself (the engine resolves preset + overrides).
 */

import type {
  BackendKind,
  DataSpec,
  LrSchedule,
  ModelKind,
  OptimizerPreset,
  PresetName,
  TaskName,
  TokenizerType,
  TrainSpec,
} from '../../protocol/data';
import { TASK_MODEL_KINDS } from '../../protocol/data';

/** A model config field's value, as `--set` and `attentionLab.model.overrides` give it. */
type FieldValue = string | number | boolean;

/** The default run of a built-in task. */
export interface TaskRun {
  /**
   * Training steps. Source→target tasks: the steps after which the tiny encoder-decoder (no
   * dropout or label smoothing, batch 32, AdamW 3e-3 with cosine decay) gets 100% of the
   * held-out pairs exactly right (measured: copy, reverse, sort and dates at 1500, addition
   * at 4000).
   */
  readonly steps: number;
  /** Context: the longest sequence kept (pairs) or the sequence length (decoder-only tasks). */
  readonly seqLen: number;
  /** Model config fields the task's run sets over the preset (the user's overrides still win). */
  readonly model: Readonly<Record<string, FieldValue>>;
  /**
   * Validation and attention snapshots per run, where they differ from the general 10 and 20:
   * the induction task's phase change takes ~250 of its 3000 steps, so its curve and its
   * Heads sparklines need finer steps to show it (every 100 and 50 steps).
   */
  readonly evals?: number;
  readonly snapshots?: number;
  /** Sequences per step where the general 32 does not fit (modular addition: every training pair). */
  readonly batchSize?: number;
  /** Peak learning rate, schedule and warm-up where they differ from the tasks' 3e-3, cosine and none. */
  readonly lr?: number;
  readonly schedule?: LrSchedule;
  readonly warmup?: number;
  /** AdamW's β2, weight decay and gradient clipping where they differ from the general 0.99, 0.1 and 1. */
  readonly adamw?: AdamwSettings;
}

/** AdamW settings a task's run sets over the general ones (runs/specModel.ts `optimizerConfig`). */
export interface AdamwSettings {
  readonly beta2: number;
  readonly weightDecay: number;
  /** 0 = no clipping. */
  readonly clipGradNorm: number;
}

/** The modulus of the modular-addition task (Nanda et al. 2023: p = 113, a prime). */
export const MODULAR_P = 113;
/** The share of the p² pairs the modular-addition task trains on (seeded); the rest are the test set. */
export const MODULAR_TRAIN_FRACTION = 0.3;
/** Training pairs of the modular-addition task: round(0.3 · 113²) = 3831, all in every step (full batch). */
export const MODULAR_TRAIN_PAIRS = Math.round(MODULAR_TRAIN_FRACTION * MODULAR_P * MODULAR_P);

/**
 * The grokking model of Nanda et al. (2023): one layer, d_model 128, four heads of 32, ReLU MLP of 512, learned
 * positions, untied unembedding, no dropout. What differs: the engine always has norms, so a pre-norm LayerNorm
 * stands before the block and the unembedding (theirs has none), and the linear layers keep their biases.
 */
const MODULAR_MODEL = {
  nDecoderLayers: 1,
  dModel: 128,
  nHeads: 4,
  dFF: 512,
  activation: 'relu',
  positional: 'learned',
  tieEmbeddings: false,
} as const;

/** Longest sequence kept in the source→target tasks' runs. */
const PAIR_TASK_SEQ = 24;

/**
 * The default run of each built-in task. Induction: a context of 32, 3000 steps (about a minute
 * on 2 cores), the tiny preset's two layers of four heads with a token-mixing MLP of width 4,
 * untied embeddings and the paper's sinusoidal positions — close to the attention-only
 * two-layer models of Olsson et al. (2022). Measured on seeds 1–4: the loss falls from
 * ln 26 ≈ 3.3 to ≈ 0.1 between steps 500 and 750 (the phase change), a layer-1 head ends at
 * previous-token 0.86–0.90 and a layer-2 head at induction 0.87–0.93, held-out loss ≈ 0.045;
 * with one layer the best induction score stays ≈ 0.08 (loss ≈ 2.6). In a context of 12 the
 * model solved the repeat with position-routing heads instead (induction ≈ 0.14), and with
 * learned positions, tied embeddings or a full MLP the heads came out less clean.
 *
 * Modular addition (grokking): the published setup (Nanda et al. 2023: p = 113, 30% of the pairs,
 * full batch, AdamW with weight decay 1 and betas (0.9, 0.98), a 10-step warm-up then a constant
 * rate) but at lr 3e-3 instead of 1e-3: decoupled decay shrinks the weights by lr·λ per step,
 * and the memorising solution gives way to the Fourier one about three times sooner. Measured
 * (PyTorch on this model, seed 1): test accuracy ≥ 99% at step 1000 with 3e-3; ours, seeds 1–3: steps
 * 660, 700, 980 (15–20 minutes on two busy CPU cores; `bench --grokking`); with 1e-3 the
 * paper's runs jump after ~10k steps, too many for 30 minutes on two CPU cores. Validation
 * (every pair once, with the progress measures) every 20 steps.
 */
export const TASK_RUNS: Readonly<Record<TaskName, TaskRun>> = {
  copy: { steps: 1500, seqLen: PAIR_TASK_SEQ, model: {} },
  reverse: { steps: 1500, seqLen: PAIR_TASK_SEQ, model: {} },
  sort: { steps: 1500, seqLen: PAIR_TASK_SEQ, model: {} },
  addition: { steps: 4000, seqLen: PAIR_TASK_SEQ, model: {} },
  dates: { steps: 1500, seqLen: PAIR_TASK_SEQ, model: {} },
  induction: {
    steps: 3000,
    seqLen: 32,
    model: { dFF: 4, tieEmbeddings: false, positional: 'sinusoidal' },
    evals: 30,
    snapshots: 60,
  },
  'modular-addition': {
    steps: 3000,
    seqLen: 3,
    model: MODULAR_MODEL,
    evals: 150,
    snapshots: 20,
    batchSize: MODULAR_TRAIN_PAIRS,
    lr: 3e-3,
    schedule: 'constant',
    warmup: 10,
    adamw: { beta2: 0.98, weightDecay: 1, clipGradNorm: 0 },
  },
};

/** What a run's data brings by default. */
export interface DataDefaults {
  /** The model kind the data trains: documents → decoder-only, pairs → encoder-decoder, a task → its own. */
  readonly kind: ModelKind;
  readonly steps: number;
  readonly seqLen: number;
  /** Peak learning rate; 0 = the optimizer's own default. */
  readonly lr: number;
  /** Model config fields set over the preset. */
  readonly overrides: Readonly<Record<string, FieldValue>>;
  /**
   * True when the data comes with its own tokenizer (the induction task's letters): the tokenizer choice does not
   * apply.
   */
  readonly ownTokenizer: boolean;
  /** Validations and attention snapshots per run (their cadence is the steps divided by these). */
  readonly evals: number;
  readonly snapshots: number;
  /** Sequences per step; absent = the general 32. */
  readonly batchSize?: number;
  /** The schedule and warm-up the data asks for; absent = cosine, none. */
  readonly schedule?: LrSchedule;
  readonly warmup?: number;
}

/** The data part that decides the defaults. */
export type DataChoice = { readonly kind: 'documents' | 'pairs' } | { readonly kind: 'task'; readonly task: TaskName };

/** The defaults a data source brings (see {@link trainSpecOf}). */
export function dataDefaults(data: DataChoice): DataDefaults {
  if (data.kind !== 'task')
    return {
      kind: data.kind === 'documents' ? 'decoder-only' : 'encoder-decoder',
      steps: 2000,
      seqLen: 64,
      lr: 0,
      overrides: {},
      ownTokenizer: false,
      evals: EVALS,
      snapshots: SNAPSHOTS,
    };
  const run = TASK_RUNS[data.task];
  const kind = TASK_MODEL_KINDS[data.task];
  // Generated tasks are noise-free, so the paper's regularization (dropout, label smoothing) only slows them down.
  return {
    kind,
    steps: run.steps,
    seqLen: run.seqLen,
    lr: run.lr ?? 3e-3,
    overrides: { dropout: 0, labelSmoothing: 0, ...run.model },
    ownTokenizer: kind === 'decoder-only',
    evals: run.evals ?? EVALS,
    snapshots: run.snapshots ?? SNAPSHOTS,
    ...(run.batchSize === undefined ? {} : { batchSize: run.batchSize }),
    ...(run.schedule === undefined ? {} : { schedule: run.schedule }),
    ...(run.warmup === undefined ? {} : { warmup: run.warmup }),
  };
}

/** Validations and attention snapshots per run unless the data says otherwise. */
const EVALS = 10;
const SNAPSHOTS = 20;

/**
 * What the user chose; a field left undefined takes the data's default (or the general one:
 * tiny preset, character tokenizer (a BPE one of 1000 tokens), batch 32, seed 1, AdamW, no
 * warm-up, auto backend).
 */
export interface RunChoices {
  readonly kind?: ModelKind | undefined;
  readonly preset?: PresetName | undefined;
  /** Model config fields over the data's (`--set`, `attentionLab.model.overrides`): these win. */
  readonly overrides?: Readonly<Record<string, FieldValue>> | undefined;
  readonly tokenizer?: TokenizerType | undefined;
  readonly vocabSize?: number | undefined;
  readonly steps?: number | undefined;
  readonly batchSize?: number | undefined;
  readonly seqLen?: number | undefined;
  /** Validate every N steps: undefined = a tenth of the run (the data may ask for more), 0 = never. */
  readonly evalEvery?: number | undefined;
  /** Checkpoint every N steps: undefined = a fifth of the run, 0 = only at the end. */
  readonly checkpointEvery?: number | undefined;
  /** Attention snapshot every N steps: undefined = a twentieth of the run (the data may ask for more), 0 = never. */
  readonly snapshotEvery?: number | undefined;
  readonly seed?: number | undefined;
  readonly optimizer?: OptimizerPreset | undefined;
  /** The schedule of adamw and muon; undefined = cosine. */
  readonly schedule?: LrSchedule | undefined;
  /** Peak learning rate; undefined = the data's default. */
  readonly lr?: number | undefined;
  readonly warmup?: number | undefined;
  readonly backend?: BackendKind | undefined;
}

/** The default BPE vocabulary size. */
export const DEFAULT_VOCAB = 1000;

/** The TrainSpec of `choices` on `data`, every unchosen field at the data's default. */
export function trainSpecOf(data: DataSpec, choices: RunChoices = {}): TrainSpec {
  const d = dataDefaults(data);
  const steps = choices.steps ?? d.steps;
  const every = (v: number | undefined, fraction: number): number => v ?? Math.max(1, Math.round(steps * fraction));
  return {
    model: {
      kind: choices.kind ?? d.kind,
      preset: choices.preset ?? 'tiny',
      overrides: { ...d.overrides, ...choices.overrides },
    },
    tokenizer: d.ownTokenizer
      ? { type: 'char', vocabSize: DEFAULT_VOCAB }
      : { type: choices.tokenizer ?? 'char', vocabSize: choices.vocabSize ?? DEFAULT_VOCAB },
    data,
    training: {
      steps,
      batchSize: choices.batchSize ?? d.batchSize ?? 32,
      seqLen: choices.seqLen ?? d.seqLen,
      evalEvery: every(choices.evalEvery, 1 / d.evals),
      checkpointEvery: every(choices.checkpointEvery, 1 / 5),
      snapshotEvery: every(choices.snapshotEvery, 1 / d.snapshots),
      seed: choices.seed ?? 1,
      optimizer: choices.optimizer ?? 'adamw',
      lr: choices.lr ?? d.lr,
      warmup: choices.warmup ?? d.warmup ?? 0,
      ...((choices.schedule ?? d.schedule) ? { schedule: choices.schedule ?? d.schedule } : {}),
    },
    backend: choices.backend ?? 'auto',
  };
}
