/**
 * The `attentionLab.*` settings as one typed, validated object, and the TrainSpec they
 * describe. Pure (no VS Code import): the caller passes a `get(key)` that reads the
 * configuration, so the rules are unit-tested and the defaults are checked against
 * package.json's `contributes.configuration`.
 *
 * Leaves out: reading or writing VS Code's configuration (extension.ts and configure.ts
 * do) and collecting the files a `documents` source names (training/trainCommand.ts does).
 */

import type {
  BackendKind,
  DataSpec,
  DecodeStrategy,
  EngineKind,
  LrSchedule,
  ModelKind,
  OptimizerPreset,
  PresetName,
  PytorchOptions,
  TaskName,
  TokenizerType,
  TorchDevice,
  TrainSpec,
} from '../../protocol/data';
import {
  BACKEND_KINDS,
  DECODE_STRATEGIES,
  ENGINE_KINDS,
  engineNamed,
  LR_SCHEDULES,
  MODEL_KINDS,
  MODEL_PRESETS,
  oldEngineNotice,
  OPTIMIZER_PRESETS,
  PRESET_NAMES,
  TASK_MODEL_KINDS,
  TASK_NAMES,
  TOKENIZER_TYPES,
  TORCH_DEVICES,
} from '../../protocol/data';
import { dataDefaults, trainSpecOf } from '../../lab/runs/runSpec';

/** Every setting, with its type. */
export interface Settings {
  readonly model: {
    readonly kind: ModelKind;
    readonly preset: PresetName;
    readonly overrides: Readonly<Record<string, string | number | boolean>>;
  };
  readonly data: {
    readonly source: 'documents' | 'pairs' | 'task';
    readonly include: string;
    readonly exclude: string;
    readonly pairsSource: string;
    readonly pairsTarget: string;
    readonly task: TaskName;
    /** Largest file read, in MB. */
    readonly maxFileSizeMB: number;
    /** Largest total read, in MB. */
    readonly maxTotalSizeMB: number;
    /** Skip lockfiles, vendored folders, minified and generated files. */
    readonly skipGenerated: boolean;
  };
  readonly tokenizer: { readonly type: TokenizerType; readonly vocabSize: number };
  readonly training: {
    /** 0 = the data's default (a built-in task's own run; 2000 otherwise). */
    readonly steps: number;
    readonly batchSize: number;
    /** 0 = the data's default (a built-in task's own context; 64 otherwise). */
    readonly seqLen: number;
    readonly evalEvery: number;
    readonly snapshotEvery: number;
    readonly checkpointEvery: number;
    readonly optimizer: OptimizerPreset;
    /** The learning-rate schedule of adamw and muon (the paper's optimizer has its own). */
    readonly schedule: LrSchedule;
    /** 0 = the data's default (3e-3 for built-in tasks, the optimizer's own otherwise). */
    readonly learningRate: number;
    readonly seed: number;
    readonly backend: BackendKind;
    readonly engine: EngineKind;
  };
  /** The PyTorch engine (used when training.engine is pytorch). */
  readonly pytorch: {
    /** The interpreter; '' = the Python extension's selected one, else python3 on PATH. */
    readonly python: string;
    readonly processes: number;
    readonly device: TorchDevice;
    readonly bf16: boolean;
  };
  readonly runs: { readonly location: 'extensionStorage' | 'workspace'; readonly folder: string };
  readonly decode: {
    readonly strategy: DecodeStrategy;
    readonly maxTokens: number;
    readonly temperature: number;
    readonly topK: number;
    readonly topP: number;
    readonly beamSize: number;
    readonly lengthPenalty: number;
  };
}

/** The defaults; package.json declares the same ones (a unit test compares them). */
/** The batch-size setting's default: at it, the data's own batch applies (the general 32; a task may set more). */
const DEFAULT_BATCH = 32;

export const DEFAULT_SETTINGS: Settings = {
  model: { kind: 'decoder-only', preset: 'tiny', overrides: {} },
  data: {
    source: 'documents',
    include: '**/*.{md,txt}',
    exclude: '',
    pairsSource: '',
    pairsTarget: '',
    task: 'reverse',
    maxFileSizeMB: 64,
    maxTotalSizeMB: 256,
    skipGenerated: true,
  },
  tokenizer: { type: 'char', vocabSize: 1000 },
  training: {
    steps: 0,
    batchSize: DEFAULT_BATCH,
    seqLen: 0,
    evalEvery: 0,
    snapshotEvery: 0,
    checkpointEvery: 0,
    optimizer: 'adamw',
    schedule: 'cosine',
    learningRate: 0,
    seed: 1,
    backend: 'auto',
    engine: 'builtin',
  },
  pytorch: { python: '', processes: 1, device: 'auto', bf16: false },
  runs: { location: 'extensionStorage', folder: '.attention-lab/runs' },
  decode: { strategy: 'greedy', maxTokens: 100, temperature: 1, topK: 0, topP: 1, beamSize: 4, lengthPenalty: 0.6 },
};

/** Reads one setting by its full key (e.g. `attentionLab.training.steps`). */
export type SettingsReader = (key: string) => unknown;

/**
 * Settings a workspace may not set in Restricted Mode (package.json's
 * `restrictedConfigurations` names the same ones): where runs are written, the interpreter
 * run, and the model's sizes (a workspace's `{"dModel": 1e15}` sizes a preview on the host).
 */
export const RESTRICTED_SETTINGS: readonly string[] = [
  'attentionLab.runs.location',
  'attentionLab.runs.folder',
  'attentionLab.pytorch.python',
  'attentionLab.model.overrides',
];

/** What VS Code's `WorkspaceConfiguration.inspect` reports of a setting (the levels read here). */
export interface SettingLevels {
  readonly defaultValue?: unknown;
  readonly globalValue?: unknown;
}

/**
 * The reader of an untrusted workspace: a {@link RESTRICTED_SETTINGS} key gives only the
 * user's (global) value or the default, never the workspace's or a folder's; other keys
 * read as `get` reads them. A trusted workspace reads everything through `get`.
 */
export function trustedReader(
  trusted: boolean,
  get: SettingsReader,
  inspect: (key: string) => SettingLevels | undefined,
): SettingsReader {
  if (trusted) return get;
  return (key) => {
    if (!RESTRICTED_SETTINGS.includes(key)) return get(key);
    const levels = inspect(key);
    return levels?.globalValue ?? levels?.defaultValue;
  };
}

type Section = keyof Settings;

/** A setting's value that was present but unusable, and what was used instead. */
export interface SettingProblem {
  readonly key: string;
  readonly message: string;
}

function pick<T>(
  get: SettingsReader,
  problems: SettingProblem[],
  section: Section,
  name: string,
  fallback: T,
  ok: (v: unknown) => boolean,
  want: string,
): T {
  const key = `attentionLab.${section}.${name}`;
  const v = get(key);
  if (v === undefined || v === null) return fallback;
  if (ok(v)) return v as T;
  problems.push({
    key,
    message: `${key} must be ${want}; got ${JSON.stringify(v)}. Using ${JSON.stringify(fallback)}.`,
  });
  return fallback;
}

const oneOf =
  (values: readonly string[]) =>
  (v: unknown): boolean =>
    typeof v === 'string' && values.includes(v);
/** "a, b or c". */
const orList = (values: readonly string[]): string =>
  values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values.join('');
const intIn =
  (min: number, max: number) =>
  (v: unknown): boolean =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const numIn =
  (min: number, max: number) =>
  (v: unknown): boolean =>
    typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const isString = (v: unknown): boolean => typeof v === 'string';
const isOverrides = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  Object.values(v).every((x) => ['string', 'number', 'boolean'].includes(typeof x));

/** The engine setting's key. */
const ENGINE_KEY = 'attentionLab.training.engine';

/**
 * Reads every setting; values of the wrong type or range fall back to the default and are
 * reported in `problems`. An old name of a value (the engine `wasm`) is read as its new name,
 * with a one-line `notices` entry (the caller shows each once per window).
 */
export function readSettings(get: SettingsReader): {
  settings: Settings;
  problems: SettingProblem[];
  notices: string[];
} {
  const p: SettingProblem[] = [];
  const notices: string[] = [];
  const d = DEFAULT_SETTINGS;
  const engineValue = get(ENGINE_KEY);
  const engine = engineNamed(engineValue);
  if (engine?.renamed)
    notices.push(oldEngineNotice(ENGINE_KEY, String(engineValue), engine.engine, `set it to "${engine.engine}"`));
  const settings: Settings = {
    model: {
      kind: pick(get, p, 'model', 'kind', d.model.kind, oneOf(MODEL_KINDS), orList(MODEL_KINDS)),
      preset: pick(get, p, 'model', 'preset', d.model.preset, oneOf(PRESET_NAMES), orList(PRESET_NAMES)),
      overrides: pick(get, p, 'model', 'overrides', d.model.overrides, isOverrides, 'an object of config fields'),
    },
    data: {
      source: pick(
        get,
        p,
        'data',
        'source',
        d.data.source,
        oneOf(['documents', 'pairs', 'task']),
        'documents, pairs or task',
      ),
      include: pick(get, p, 'data', 'include', d.data.include, isString, 'a glob'),
      exclude: pick(get, p, 'data', 'exclude', d.data.exclude, isString, 'a glob'),
      pairsSource: pick(get, p, 'data', 'pairsSource', d.data.pairsSource, isString, 'a path'),
      pairsTarget: pick(get, p, 'data', 'pairsTarget', d.data.pairsTarget, isString, 'a path'),
      task: pick(get, p, 'data', 'task', d.data.task, oneOf(TASK_NAMES), orList(TASK_NAMES)),
      maxFileSizeMB: pick(
        get,
        p,
        'data',
        'maxFileSizeMB',
        d.data.maxFileSizeMB,
        numIn(0.001, 1 << 20),
        'a size in MB above 0',
      ),
      maxTotalSizeMB: pick(
        get,
        p,
        'data',
        'maxTotalSizeMB',
        d.data.maxTotalSizeMB,
        numIn(0.001, 1 << 20),
        'a size in MB above 0',
      ),
      skipGenerated: pick(
        get,
        p,
        'data',
        'skipGenerated',
        d.data.skipGenerated,
        (v) => typeof v === 'boolean',
        'true or false',
      ),
    },
    tokenizer: {
      type: pick(get, p, 'tokenizer', 'type', d.tokenizer.type, oneOf(TOKENIZER_TYPES), orList(TOKENIZER_TYPES)),
      vocabSize: pick(
        get,
        p,
        'tokenizer',
        'vocabSize',
        d.tokenizer.vocabSize,
        intIn(261, 65536),
        'an integer in 261..65536',
      ),
    },
    training: {
      steps: pick(
        get,
        p,
        'training',
        'steps',
        d.training.steps,
        intIn(0, 1e6),
        "an integer in 0..1000000 (0 = the data's default)",
      ),
      batchSize: pick(get, p, 'training', 'batchSize', d.training.batchSize, intIn(1, 4096), 'an integer in 1..4096'),
      seqLen: pick(
        get,
        p,
        'training',
        'seqLen',
        d.training.seqLen,
        (v) => v === 0 || intIn(2, 4096)(v),
        "an integer in 2..4096, or 0 for the data's default",
      ),
      evalEvery: pick(get, p, 'training', 'evalEvery', d.training.evalEvery, intIn(0, 1e6), 'an integer ≥ 0'),
      snapshotEvery: pick(
        get,
        p,
        'training',
        'snapshotEvery',
        d.training.snapshotEvery,
        intIn(0, 1e6),
        'an integer ≥ 0',
      ),
      checkpointEvery: pick(
        get,
        p,
        'training',
        'checkpointEvery',
        d.training.checkpointEvery,
        intIn(0, 1e6),
        'an integer ≥ 0',
      ),
      optimizer: pick(
        get,
        p,
        'training',
        'optimizer',
        d.training.optimizer,
        oneOf(OPTIMIZER_PRESETS),
        orList(OPTIMIZER_PRESETS),
      ),
      schedule: pick(get, p, 'training', 'schedule', d.training.schedule, oneOf(LR_SCHEDULES), orList(LR_SCHEDULES)),
      learningRate: pick(
        get,
        p,
        'training',
        'learningRate',
        d.training.learningRate,
        numIn(0, 10),
        'a number in 0..10',
      ),
      seed: pick(get, p, 'training', 'seed', d.training.seed, intIn(-2147483648, 2147483647), 'a 32-bit integer'),
      backend: pick(get, p, 'training', 'backend', d.training.backend, oneOf(BACKEND_KINDS), orList(BACKEND_KINDS)),
      engine: pick(
        () => engine?.engine ?? engineValue,
        p,
        'training',
        'engine',
        d.training.engine,
        oneOf(ENGINE_KINDS),
        orList(ENGINE_KINDS),
      ),
    },
    pytorch: {
      python: pick(
        get,
        p,
        'pytorch',
        'python',
        d.pytorch.python,
        isString,
        'a path to a Python interpreter (or empty)',
      ),
      processes: pick(get, p, 'pytorch', 'processes', d.pytorch.processes, intIn(1, 1024), 'an integer in 1..1024'),
      device: pick(get, p, 'pytorch', 'device', d.pytorch.device, oneOf(TORCH_DEVICES), orList(TORCH_DEVICES)),
      bf16: pick(get, p, 'pytorch', 'bf16', d.pytorch.bf16, (v) => typeof v === 'boolean', 'true or false'),
    },
    runs: {
      location: pick(
        get,
        p,
        'runs',
        'location',
        d.runs.location,
        oneOf(['extensionStorage', 'workspace']),
        'extensionStorage or workspace',
      ),
      folder: pick(
        get,
        p,
        'runs',
        'folder',
        d.runs.folder,
        (v) => typeof v === 'string' && v.trim() !== '',
        'a folder path',
      ),
    },
    decode: {
      strategy: pick(
        get,
        p,
        'decode',
        'strategy',
        d.decode.strategy,
        oneOf(DECODE_STRATEGIES),
        orList(DECODE_STRATEGIES),
      ),
      maxTokens: pick(get, p, 'decode', 'maxTokens', d.decode.maxTokens, intIn(1, 4096), 'an integer in 1..4096'),
      temperature: pick(get, p, 'decode', 'temperature', d.decode.temperature, numIn(0, 10), 'a number in 0..10'),
      topK: pick(get, p, 'decode', 'topK', d.decode.topK, intIn(0, 65536), 'an integer ≥ 0'),
      topP: pick(get, p, 'decode', 'topP', d.decode.topP, numIn(0, 1), 'a number in 0..1'),
      beamSize: pick(get, p, 'decode', 'beamSize', d.decode.beamSize, intIn(1, 64), 'an integer in 1..64'),
      lengthPenalty: pick(get, p, 'decode', 'lengthPenalty', d.decode.lengthPenalty, numIn(0, 5), 'a number in 0..5'),
    },
  };
  return { settings, problems: p, notices };
}

/**
 * The model kind the settings' data trains: documents → decoder-only, pairs → encoder-decoder, a built-in task → its
 * own (induction: decoder-only).
 */
export function kindForData(source: Settings['data']['source'], task: TaskName): ModelKind {
  return source === 'task' ? TASK_MODEL_KINDS[task] : dataDefaults({ kind: source }).kind;
}

/** Why this model kind cannot train on this data, or null when they fit. */
export function mismatch(s: Settings): string | null {
  const want = kindForData(s.data.source, s.data.task);
  if (s.model.kind !== want) {
    const data =
      s.data.source === 'documents'
        ? 'Documents train'
        : s.data.source === 'pairs'
          ? 'A pairs file trains'
          : `The built-in task "${s.data.task}" trains`;
    return (
      `${data} a${want === 'encoder-decoder' ? 'n' : ''} ${want} model, but ` +
      `attentionLab.model.kind is ${s.model.kind}. Run "Attention Lab: Configure Model…" or set the kind to ${want}.`
    );
  }
  const presets: readonly string[] = MODEL_PRESETS[s.model.kind];
  if (!presets.includes(s.model.preset)) {
    const of = MODEL_KINDS.filter((k) => (MODEL_PRESETS[k] as readonly string[]).includes(s.model.preset)).join(
      ' and ',
    );
    return `Preset "${s.model.preset}" is for ${of} models; for ${s.model.kind} models choose ${orList(presets)}.`;
  }
  return null;
}

/**
 * The TrainSpec of the settings for `data`, through the rule the CLI uses (src/lab/runs/runSpec.ts):
 * a setting at 0 (steps, context, learning rate, the intervals) takes the data's default, so a
 * built-in task trains the run `attention-lab train --task NAME` trains.
 */
export function specFromSettings(s: Settings, found: DataSpec): TrainSpec {
  const t = s.training;
  const mb = (v: number): number => Math.max(1, Math.round(v * 2 ** 20));
  const data: DataSpec =
    found.kind === 'documents'
      ? {
          ...found,
          maxFileBytes: mb(s.data.maxFileSizeMB),
          maxTotalBytes: mb(s.data.maxTotalSizeMB),
          skipGenerated: s.data.skipGenerated,
        }
      : found;
  const auto = (v: number): number | undefined => (v > 0 ? v : undefined);
  return trainSpecOf(data, {
    kind: s.model.kind,
    preset: s.model.preset,
    overrides: s.model.overrides,
    tokenizer: s.tokenizer.type,
    vocabSize: s.tokenizer.vocabSize,
    steps: auto(t.steps),
    // The setting's default (32) lets the data choose: the grokking task trains on its whole training set per step.
    batchSize: t.batchSize === DEFAULT_BATCH ? undefined : t.batchSize,
    seqLen: auto(t.seqLen),
    evalEvery: auto(t.evalEvery),
    checkpointEvery: auto(t.checkpointEvery),
    snapshotEvery: auto(t.snapshotEvery),
    seed: t.seed,
    optimizer: t.optimizer,
    // The paper's optimizer has its own schedule: the setting applies to adamw and muon.
    ...(t.optimizer !== 'paper' && t.schedule !== 'cosine' ? { schedule: t.schedule } : {}),
    lr: auto(t.learningRate),
    // No warm-up setting: the data's (none, or the grokking task's 10 steps).
    warmup: undefined,
    backend: t.backend,
  });
}

/**
 * The PyTorch engine's options of the settings, or null when our engine trains. `python` is
 * the interpreter already resolved (the setting, the Python extension's choice, or python3:
 * extension.ts decides), `trainerDir` the trainer shipped in the extension (dist/pytorch/).
 */
export function pytorchOptionsOf(s: Settings, python: string, trainerDir: string): PytorchOptions | null {
  if (s.training.engine !== 'pytorch') return null;
  return {
    python,
    nproc: s.pytorch.processes,
    accumulate: 1,
    device: s.pytorch.device,
    bf16: s.pytorch.bf16,
    trainerDir,
  };
}
