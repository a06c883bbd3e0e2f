/**
 * The one message vocabulary between the training worker, its host (the CLI or the
 * extension host) and the dashboard webview, with runtime validation at every boundary.
 * Each message is a discriminated union member on `type` with a path-like name; the
 * validators check every field, so a malformed or stale message is rejected with a
 * `ProtocolError` that says which field is wrong, never half-processed.
 *
 * Kinds (STYLE.md §2): commands (host → worker), notifications (past tense, worker → host,
 * droppable ones carry snapshots, not deltas), requests (`id`, answered with
 * `{ ok, result | error }`). Tensors travel as Float32Array / Uint8Array plus shape.
 *
 * Imports nothing: engine types that cross (model config, errors) travel as plain JSON and
 * are validated again by the engine where they are used.
 */

/* ------------------------------------------------------------------ shared data */

/** A JSON value (what crosses as configuration). */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** An engine error as data (code + message that says what to do). */
export interface ErrorData {
  readonly code: string;
  readonly message: string;
}

/** Where training data comes from. */
export type DataSpec =
  | { readonly kind: 'task'; readonly task: TaskName }
  | {
      readonly kind: 'documents';
      readonly files: readonly string[];
      readonly root: string;
      /** Largest file read, in bytes (absent in runs made before limits were settings: the defaults then). */
      readonly maxFileBytes?: number;
      /** Largest total read, in bytes. */
      readonly maxTotalBytes?: number;
      /** Skip lockfiles, vendored folders, minified and generated files (default true). */
      readonly skipGenerated?: boolean;
    }
  | { readonly kind: 'pairs'; readonly source: string; readonly target: string | null };

/** The built-in generated tasks. */
export type TaskName = 'copy' | 'reverse' | 'sort' | 'addition' | 'dates';
export const TASK_NAMES: readonly TaskName[] = ['copy', 'reverse', 'sort', 'addition', 'dates'];

/*
 * The names people choose among, declared once here (STYLE.md §12): the CLI's flags and help,
 * the settings' validation and the validators below derive from these lists, package.json's
 * enums are compared with them (test/unit/extension/settings.test.ts), and the engine's
 * implementations with them (test/unit/declaredNames.test.ts). They live in the protocol
 * because every layer may import it; the engine, which imports nothing, keeps its own types.
 */

/**
 * The model presets of each model kind (their sizes: src/engine/config.ts `presetConfig`).
 * The keys are the model kinds: decoder-only (GPT-style, on documents) and encoder-decoder
 * (the paper's, on source→target pairs).
 */
export const MODEL_PRESETS = {
  'decoder-only': ['tiny', 'small', 'gpt'],
  'encoder-decoder': ['tiny', 'small', 'base'],
} as const;

/** A model kind. */
export type ModelKind = keyof typeof MODEL_PRESETS;
/** The model kinds, in the order people are offered them. */
export const MODEL_KINDS = Object.keys(MODEL_PRESETS) as readonly ModelKind[];

/** A preset of some model kind. */
export type PresetName = (typeof MODEL_PRESETS)[ModelKind][number];
/** Every preset name, each once, in the order of {@link MODEL_PRESETS}. */
export const PRESET_NAMES: readonly PresetName[] = [...new Set(MODEL_KINDS.flatMap((k) => MODEL_PRESETS[k]))];

/** The kernel backends a run can ask for: `auto` is wasm where the runtime has WebAssembly SIMD, else reference. */
export const BACKEND_KINDS = ['auto', 'wasm', 'reference'] as const;
/** A kernel backend a run can ask for. */
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** Everything that defines a run; saved in run.json. */
export interface TrainSpec {
  readonly model: {
    readonly kind: ModelKind;
    /** One of MODEL_PRESETS[kind] (the engine checks the pair when it builds the config). */
    readonly preset: PresetName;
    /** Config fields to override (`--set key=value`). */
    readonly overrides: { readonly [key: string]: string | number | boolean };
  };
  readonly tokenizer: { readonly type: 'char' | 'bpe'; readonly vocabSize: number };
  readonly data: DataSpec;
  readonly training: {
    readonly steps: number;
    /** Sequences per batch (decoder-only) or the target-token budget per batch (pairs). */
    readonly batchSize: number;
    /** Context length for documents; longest sequence kept for pairs. */
    readonly seqLen: number;
    readonly evalEvery: number;
    readonly checkpointEvery: number;
    /** Attention snapshot of the probe sample every N steps (0 = off). */
    readonly snapshotEvery: number;
    readonly seed: number;
    readonly optimizer: 'paper' | 'adamw';
    /** Peak learning rate (adamw) or factor of the paper's schedule (paper); 0 = default. */
    readonly lr: number;
    readonly warmup: number;
  };
  readonly backend: BackendKind;
}

/**
 * How the learning rate runs over one segment of a run (the formulas are in
 * src/engine/optim/schedule.ts): `cosine` (AdamW: warm-up, then cosine decay to lr/10),
 * `constant` (AdamW on runs too short to decay), `noam` (the paper's schedule), `restart`
 * (a warm restart: warm up from lr/10 back to lr, then cosine down to lr/10 again).
 */
export type SegmentSchedule = 'cosine' | 'constant' | 'noam' | 'restart';
export const SEGMENT_SCHEDULES: readonly SegmentSchedule[] = ['cosine', 'constant', 'noam', 'restart'];

/**
 * Steps fromStep+1 … toStep of a run and the schedule they follow. A run's segments are
 * contiguous from step 0: the first is its original plan, each later one an extension with
 * more steps (`train --resume DIR --steps N`, "Continue Training…").
 */
export interface RunSegment {
  readonly fromStep: number;
  readonly toStep: number;
  readonly schedule: SegmentSchedule;
}

/** One file left out of a corpus, and why. */
export interface SkippedFile {
  readonly path: string;
  readonly reason: SkipReason;
  /** The file's size in bytes, where it matters (too large, past the total). */
  readonly bytes?: number;
}

/** Why a file was left out of a corpus. */
export type SkipReason =
  | 'binary' | 'not-utf8' | 'too-large' | 'over-total' | 'empty' | 'unreadable' | 'ignored'
  | 'lockfile' | 'vendored' | 'minified' | 'generated';

/** Every skip reason, in the order people read them. */
export const SKIP_REASONS: readonly SkipReason[] = [
  'binary', 'not-utf8', 'too-large', 'over-total', 'empty', 'unreadable', 'ignored', 'lockfile', 'vendored', 'minified', 'generated',
];

/** Each skip reason, for people. */
export const SKIP_REASON_TEXT: { readonly [R in SkippedFile['reason']]: string } = {
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
  const counts = new Map<SkippedFile['reason'], number>();
  for (const f of skipped) counts.set(f.reason, (counts.get(f.reason) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} ${SKIP_REASON_TEXT[reason]}`).join(', ');
}

/**
 * How validation was held out: whole documents, the last 10% of each document's text (few
 * documents), a seeded share of pairs, generated pairs of a task — or nothing, when the data
 * is too small to hold any out (the "validation" curve is then the training loss, and says so).
 */
export type ValidationKind = 'documents' | 'tail' | 'pairs' | 'task' | 'none';

/** What a run is training on, for people. */
export interface DataSummary {
  readonly description: string;
  readonly documents: number;
  readonly bytes: number;
  readonly trainTokens: number;
  readonly valTokens: number;
  readonly skipped: readonly SkippedFile[];
  /** How validation was held out, and a line saying so (absent in runs made before it was recorded). */
  readonly validation?: { readonly kind: ValidationKind; readonly text: string };
  /** Up to three short beginnings of held-out text, for samples and prompts. */
  readonly prompts?: readonly string[];
}

/** Progress of the work before the first step (reading, tokenizer training, encoding). */
export interface PrepareProgress {
  readonly phase: 'read' | 'tokenizer' | 'encode';
  /** Bytes of text done and in all (0 in all while unknown). */
  readonly done: number;
  readonly total: number;
  /** For people: "Encoding input.txt (char)". */
  readonly message: string;
}

/** Attention probabilities of one layer for the probe sample: [heads, rows, cols]. */
export interface AttentionMapData {
  readonly stack: 'encoder' | 'decoder';
  readonly kind: 'self' | 'cross';
  readonly layer: number;
  readonly shape: readonly [number, number, number];
  readonly data: Float32Array;
}

/** A mask as the engine used it, with its broadcast shape ([B,1,1,S], [1,1,T,T] …). */
export interface MaskData {
  readonly name: string;
  readonly shape: readonly number[];
  readonly data: Uint8Array;
}

/** Snapshot of the probe sample's attention at one step. */
export interface AttentionSnapshot {
  readonly step: number;
  /** Token strings of the source (encoder-decoder) and of the decoder input. */
  readonly srcTokens: readonly string[];
  readonly tgtTokens: readonly string[];
  readonly maps: readonly AttentionMapData[];
  readonly masks: readonly MaskData[];
}

/** Metrics of one optimizer step (one line of metrics.jsonl). */
export interface StepMetrics {
  readonly step: number;
  readonly loss: number;
  readonly lr: number;
  readonly gradNorm: number;
  readonly tokens: number;
  readonly tokensPerSec: number;
  readonly elapsedMs: number;
}

/** Validation results at one step. */
export interface EvalMetrics {
  readonly step: number;
  readonly loss: number;
  readonly ppl: number;
  readonly exactMatch: number | null;
  readonly bleu: number | null;
}

/** Sizes of the model being trained. */
export interface ModelInfo {
  readonly config: { readonly [key: string]: Json };
  readonly params: number;
  readonly paramsByModule: { readonly [module: string]: number };
  readonly memoryBytes: number;
  readonly flopsPerToken: number;
  readonly backend: string;
}

/* ------------------------------------------------------------------ worker ⇄ host */

/** Commands from the host to the training worker. */
export type HostToWorker =
  | {
      readonly type: 'train/start';
      readonly runDir: string;
      readonly spec: TrainSpec;
      readonly resume: boolean;
      /** Stop (with a checkpoint) after this step, to continue later with resume; null = run to the planned total. */
      readonly stopAt: number | null;
      /** With resume: train a finished or stopped run on to this total step (a new segment); null = the planned total. */
      readonly extendTo: number | null;
    }
  | { readonly type: 'train/pause' }
  | { readonly type: 'train/resume' }
  | { readonly type: 'train/stop' };

/** Notifications from the training worker. */
export type WorkerToHost =
  | { readonly type: 'worker/ready' }
  | { readonly type: 'train/didLog'; readonly level: 'info' | 'warn'; readonly message: string }
  | ({ readonly type: 'train/didProgress' } & PrepareProgress)
  | {
      readonly type: 'train/didStart';
      readonly runDir: string;
      readonly startStep: number;
      readonly totalSteps: number;
      /** The run's schedule segments (one unless it was extended); the last ends at totalSteps. */
      readonly segments: readonly RunSegment[];
      readonly model: ModelInfo;
      readonly data: DataSummary;
    }
  | ({ readonly type: 'train/didStep' } & StepMetrics)
  | ({ readonly type: 'train/didEval' } & EvalMetrics)
  | ({ readonly type: 'train/didSnapshot' } & AttentionSnapshot)
  | { readonly type: 'train/didSaveCheckpoint'; readonly step: number; readonly path: string }
  | { readonly type: 'train/didPause'; readonly step: number }
  | { readonly type: 'train/didResume'; readonly step: number }
  | { readonly type: 'train/didFinish'; readonly step: number; readonly reason: 'completed' | 'stopped' }
  | { readonly type: 'train/didFail'; readonly step: number; readonly error: ErrorData };

/* ------------------------------------------------------------------ host ⇄ model worker */

/** Per-token surprise of a text under a run's model (`model/score`). */
export interface ScoreOutput {
  /** Display strings of the scored tokens (BOS excluded; an encoder-decoder target ends with its EOS). */
  readonly tokens: readonly string[];
  /** log p(token | what precedes it, up to a context: lab/inference/score.ts states the rule), one per token. */
  readonly logprobs: readonly number[];
  /** UTF-16 offsets [start, end) of each token in the scored text (a token inside a split character gets that character's range). */
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  /** Tokens past the most one text is scored on (MAX_SCORED_TOKENS), left unscored. */
  readonly truncated: number;
}

/** What `model/export` wrote. */
export interface ExportOutput {
  readonly files: readonly string[];
  readonly tensors: number;
  readonly warnings: readonly string[];
}

/**
 * Test files a run never saw (`eval --data/--pairs`, "Evaluate on Files…"): documents for a
 * decoder-only run, source→target pairs for an encoder-decoder.
 */
export type EvalFilesData =
  | {
      readonly kind: 'documents';
      /** Globs, files or folders (relative to `cwd` or absolute) when `glob`; else exact file paths. */
      readonly paths: readonly string[];
      /** Folder the paths are relative to; document paths are reported relative to it. */
      readonly cwd: string;
      readonly glob: boolean;
      /** Size limits in bytes (the training defaults when absent). */
      readonly maxFileBytes?: number;
      readonly maxTotalBytes?: number;
    }
  /** Two parallel line files, or one `.tsv` / `.jsonl` file when `target` is null. */
  | { readonly kind: 'pairs'; readonly source: string; readonly target: string | null };

/** What evaluating a run on test files measured (`model/evaluateFiles`, `eval --data/--pairs`). */
export interface EvalFilesOutput {
  readonly kind: 'documents' | 'pairs';
  /** The test data, for people: "2 documents under /w/test", "/w/test.de → /w/test.en (40 pairs)". */
  readonly source: string;
  /** Checkpoint step of the model evaluated. */
  readonly step: number;
  /** The model's context: window length (documents), longest source or target + 1 (pairs). */
  readonly context: number;
  /** Token-weighted mean negative log-likelihood in nats (no dropout, no label smoothing). */
  readonly loss: number;
  /** exp(loss). */
  readonly ppl: number;
  /** Target tokens scored. */
  readonly tokens: number;
  /** Documents scored (0 for pairs). */
  readonly documents: number;
  /** Pairs scored for loss (0 for documents). */
  readonly pairs: number;
  /** Pairs left out because the source or the target does not fit the context. */
  readonly pairsTooLong: number;
  /** Pairs greedily decoded for exact match and BLEU: the first `maxPairs` scored ones. */
  readonly decoded: number;
  /** Exact-match rate of the decoded pairs (null for documents). */
  readonly exactMatch: number | null;
  /** Corpus BLEU (0–100, sacreBLEU's defaults) of the decoded pairs (null for documents). */
  readonly bleu: number | null;
  /** Files that matched but were left out (documents), and why. */
  readonly skipped: readonly SkippedFile[];
  /** Characters (code points) of the test text. */
  readonly characters: number;
  /** Of those, characters outside a char tokenizer's vocabulary; null for BPE (its bytes cover any text). */
  readonly unseenChars: number | null;
  /** A few of the unseen characters, most frequent first. */
  readonly unseenExamples: readonly string[];
}

/**
 * Requests from the extension host to its model worker (decode, score, attention, export,
 * speed calibration, evaluation on files), each answered by exactly one `model/did*`
 * response with the same id, or `model/didFail`.
 */
export type HostToModelWorker =
  | { readonly type: 'model/decode'; readonly id: number; readonly runDir: string; readonly params: DecodeParams }
  | { readonly type: 'model/score'; readonly id: number; readonly runDir: string; readonly source: string | null; readonly text: string }
  | { readonly type: 'model/attend'; readonly id: number; readonly runDir: string; readonly text: string }
  | { readonly type: 'model/export'; readonly id: number; readonly runDir: string; readonly outDir: string }
  | { readonly type: 'model/calibrate'; readonly id: number; readonly spec: TrainSpec; readonly vocabSize: number }
  | {
      readonly type: 'model/evaluateFiles';
      readonly id: number;
      readonly runDir: string;
      readonly data: EvalFilesData;
      /** Most pairs to decode for exact match and BLEU (the loss covers every pair). */
      readonly maxPairs: number;
      /**
       * One Int32 on a SharedArrayBuffer: the host stores 1 to cancel, and the worker, busy
       * computing, reads it between batches (a cancel message would wait behind the work).
       */
      readonly cancel: Int32Array;
    };

/** Responses (and streamed tokens) from the model worker. */
export type ModelWorkerToHost =
  | { readonly type: 'worker/ready' }
  | { readonly type: 'model/didToken'; readonly id: number; readonly token: string; readonly logprob: number }
  | { readonly type: 'model/didDecode'; readonly id: number; readonly output: DecodeOutput }
  | { readonly type: 'model/didScore'; readonly id: number; readonly output: ScoreOutput }
  | { readonly type: 'model/didAttend'; readonly id: number; readonly snapshot: AttentionSnapshot }
  | { readonly type: 'model/didExport'; readonly id: number; readonly output: ExportOutput }
  | { readonly type: 'model/didCalibrate'; readonly id: number; readonly secondsPerStep: number; readonly flopsPerSec: number; readonly backend: string }
  /** Progress of a long request (`model/evaluateFiles`): `done` of `total` batches and decodes. */
  | { readonly type: 'model/didProgress'; readonly id: number; readonly done: number; readonly total: number }
  | { readonly type: 'model/didEvaluateFiles'; readonly id: number; readonly output: EvalFilesOutput }
  | { readonly type: 'model/didFail'; readonly id: number; readonly error: ErrorData };

/* ------------------------------------------------------------------ host ⇄ webview */

/** A run as the dashboard lists it. */
export interface RunSummary {
  readonly id: string;
  readonly name: string;
  readonly runDir: string;
  readonly status: 'created' | 'training' | 'paused' | 'completed' | 'stopped' | 'failed';
  readonly kind: ModelKind;
  readonly step: number;
  readonly totalSteps: number;
  /** The schedule segments (one unless the run was extended); the last ends at totalSteps. */
  readonly segments: readonly RunSegment[];
  readonly bestValLoss: number | null;
  readonly model: ModelInfo | null;
  readonly data: DataSummary | null;
}

/** Everything the dashboard needs to draw one run from scratch (restore, report, overlay). */
export interface RunState {
  readonly run: RunSummary;
  readonly steps: readonly StepMetrics[];
  readonly evals: readonly EvalMetrics[];
  readonly snapshots: readonly AttentionSnapshot[];
}

/** Options of one playground decode. */
export interface DecodeParams {
  readonly input: string;
  readonly strategy: 'greedy' | 'beam' | 'sample';
  readonly beam: number;
  readonly lengthPenalty: number;
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
  readonly maxTokens: number;
  readonly seed: number;
}

/** Attention of a decode's generated tokens, per decoder layer ([H, T, K] self, [H, T, S] cross). */
export interface DecodeAttentionData {
  readonly queryStart: number;
  readonly queries: number;
  readonly selfKeys: number;
  readonly sourceLength: number;
  readonly nHeads: number;
  readonly self: readonly Float32Array[];
  readonly cross: readonly Float32Array[];
}

/** A finished decode. */
export interface DecodeOutput {
  readonly text: string;
  readonly promptTokens: readonly string[];
  readonly tokens: readonly string[];
  readonly ids: readonly number[];
  readonly logprobs: readonly number[];
  readonly score: number;
  readonly attention: DecodeAttentionData | null;
  /** Beam search: the n-best texts and scores. */
  readonly beams: readonly { readonly text: string; readonly score: number }[];
}

/** Messages from the extension host (or the report page's loader) to the dashboard. */
export type HostToWebview =
  | { readonly type: 'dashboard/didLoadRuns'; readonly runs: readonly RunState[]; readonly selectedId: string | null }
  | { readonly type: 'run/didUpdate'; readonly runId: string; readonly event: WorkerToHost }
  | { readonly type: 'decode/didToken'; readonly id: number; readonly token: string; readonly logprob: number }
  | { readonly type: 'decode/didFinish'; readonly id: number; readonly output: DecodeOutput }
  | { readonly type: 'decode/didFail'; readonly id: number; readonly error: ErrorData }
  /** A decode the host ran itself (the Decode command): show it in the playground. */
  | { readonly type: 'playground/didDecode'; readonly runId: string; readonly params: DecodeParams; readonly output: DecodeOutput }
  /** Bring a run (if given) and a tab to the front, e.g. after "Show Attention for Selection". */
  | { readonly type: 'dashboard/show'; readonly runId: string | null; readonly tab: DashboardTab };

/** The dashboard's tabs. */
export type DashboardTab = 'curves' | 'attention' | 'masks' | 'model' | 'playground';

/** Messages from the dashboard to its host. */
export type WebviewToHost =
  | { readonly type: 'webview/ready' }
  | { readonly type: 'webview/didError'; readonly message: string }
  | { readonly type: 'decode/request'; readonly id: number; readonly runId: string; readonly params: DecodeParams }
  | { readonly type: 'train/control'; readonly runId: string; readonly action: 'pause' | 'resume' | 'stop' };

/* ------------------------------------------------------------------ validation */

/** A message that does not match the protocol. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

type Check = (v: unknown, path: string) => void;

function fail(path: string, want: string, v: unknown): never {
  const got = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  throw new ProtocolError(`${path}: expected ${want}, got ${got === 'string' ? JSON.stringify(String(v).slice(0, 40)) : got}`);
}

const num: Check = (v, p) => {
  if (typeof v !== 'number' || Number.isNaN(v)) fail(p, 'a number', v);
};
const finiteOrNaN: Check = (v, p) => {
  if (typeof v !== 'number') fail(p, 'a number', v);
};
const int: Check = (v, p) => {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(p, 'an integer', v);
};
const nonNegInt: Check = (v, p) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(p, 'an integer ≥ 0', v);
};
const posInt: Check = (v, p) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) fail(p, 'an integer ≥ 1', v);
};
const str: Check = (v, p) => {
  if (typeof v !== 'string') fail(p, 'a string', v);
};
const bool: Check = (v, p) => {
  if (typeof v !== 'boolean') fail(p, 'true or false', v);
};
const nullable = (c: Check): Check => (v, p) => {
  if (v !== null) c(v, p);
};
const optional = (c: Check): Check => (v, p) => {
  if (v !== undefined) c(v, p);
};
const oneOf = (...values: readonly string[]): Check => (v, p) => {
  if (typeof v !== 'string' || !values.includes(v)) fail(p, `one of ${values.join(', ')}`, v);
};
const arrayOf = (c: Check): Check => (v, p) => {
  if (!Array.isArray(v)) fail(p, 'an array', v);
  (v as unknown[]).forEach((x, i) => c(x, `${p}[${i}]`));
};
const record = (c: Check): Check => (v, p) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(p, 'an object', v);
  for (const [k, x] of Object.entries(v as object)) c(x, `${p}.${k}`);
};
const json: Check = (v, p) => {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return;
  if (typeof v === 'number') return;
  if (Array.isArray(v)) return v.forEach((x, i) => json(x, `${p}[${i}]`));
  if (typeof v === 'object') return record(json)(v, p);
  fail(p, 'JSON', v);
};
const f32: Check = (v, p) => {
  if (!(v instanceof Float32Array)) fail(p, 'a Float32Array', v);
};
const u8: Check = (v, p) => {
  if (!(v instanceof Uint8Array)) fail(p, 'a Uint8Array', v);
};
const obj = (fields: Record<string, Check>): Check => (v, p) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(p, 'an object', v);
  const o = v as Record<string, unknown>;
  for (const [k, c] of Object.entries(fields)) c(o[k], `${p}.${k}`);
};

const errorData = obj({ code: str, message: str });
const primitive: Check = (v, p) => {
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') fail(p, 'a string, number or boolean', v);
};
const dataSpec: Check = (v, p) => {
  obj({ kind: oneOf('task', 'documents', 'pairs') })(v, p);
  const kind = (v as { kind: string }).kind;
  if (kind === 'task') obj({ task: oneOf(...TASK_NAMES) })(v, p);
  else if (kind === 'documents') obj({ files: arrayOf(str), root: str, maxFileBytes: optional(posInt), maxTotalBytes: optional(posInt), skipGenerated: optional(bool) })(v, p);
  else obj({ source: str, target: nullable(str) })(v, p);
};
const trainSpec = obj({
  model: obj({ kind: oneOf(...MODEL_KINDS), preset: oneOf(...PRESET_NAMES), overrides: record(primitive) }),
  tokenizer: obj({ type: oneOf('char', 'bpe'), vocabSize: posInt }),
  data: dataSpec,
  training: obj({
    steps: posInt, batchSize: posInt, seqLen: posInt, evalEvery: nonNegInt, checkpointEvery: nonNegInt,
    snapshotEvery: nonNegInt, seed: int, optimizer: oneOf('paper', 'adamw'), lr: num, warmup: nonNegInt,
  }),
  backend: oneOf(...BACKEND_KINDS),
});
const runSegments: Check = (v, p) => {
  arrayOf(obj({ fromStep: nonNegInt, toStep: posInt, schedule: oneOf(...SEGMENT_SCHEDULES) }))(v, p);
  const segments = v as RunSegment[];
  if (segments.length === 0) fail(p, 'at least one segment', v);
  let from = 0;
  segments.forEach((s, i) => {
    if (s.fromStep !== from) throw new ProtocolError(`${p}[${i}].fromStep: expected ${from} (${i === 0 ? 'the first segment starts at step 0' : 'where the segment before ends'}), got ${s.fromStep}`);
    if (s.toStep <= s.fromStep) throw new ProtocolError(`${p}[${i}].toStep: expected more than fromStep ${s.fromStep}, got ${s.toStep}`);
    from = s.toStep;
  });
};
const stepMetrics = { step: posInt, loss: finiteOrNaN, lr: num, gradNorm: finiteOrNaN, tokens: nonNegInt, tokensPerSec: num, elapsedMs: num };
const evalMetrics = { step: nonNegInt, loss: num, ppl: num, exactMatch: nullable(num), bleu: nullable(num) };
const attentionMap: Check = (v, p) => {
  obj({ stack: oneOf('encoder', 'decoder'), kind: oneOf('self', 'cross'), layer: nonNegInt, shape: arrayOf(nonNegInt), data: f32 })(v, p);
  const m = v as AttentionMapData;
  if (m.shape.length !== 3) fail(`${p}.shape`, '[heads, rows, cols]', m.shape);
  if (m.data.length !== m.shape[0] * m.shape[1] * m.shape[2]) throw new ProtocolError(`${p}.data: ${m.data.length} values do not fill shape [${m.shape.join(', ')}]`);
};
const maskData: Check = (v, p) => {
  obj({ name: str, shape: arrayOf(nonNegInt), data: u8 })(v, p);
  const m = v as MaskData;
  if (m.data.length !== m.shape.reduce((a, b) => a * b, 1)) throw new ProtocolError(`${p}.data: ${m.data.length} values do not fill shape [${m.shape.join(', ')}]`);
};
const snapshot = { step: nonNegInt, srcTokens: arrayOf(str), tgtTokens: arrayOf(str), maps: arrayOf(attentionMap), masks: arrayOf(maskData) };
const modelInfo = obj({ config: record(json), params: nonNegInt, paramsByModule: record(nonNegInt), memoryBytes: nonNegInt, flopsPerToken: num, backend: str });
const skippedFile = obj({ path: str, reason: oneOf(...SKIP_REASONS), bytes: optional(nonNegInt) });
const dataSummary = obj({
  description: str, documents: nonNegInt, bytes: nonNegInt, trainTokens: nonNegInt, valTokens: nonNegInt,
  skipped: arrayOf(skippedFile),
  validation: optional(obj({ kind: oneOf('documents', 'tail', 'pairs', 'task', 'none'), text: str })),
  prompts: optional(arrayOf(str)),
});

const HOST_TO_WORKER: { readonly [K in HostToWorker['type']]: Record<string, Check> } = {
  'train/start': { runDir: str, spec: trainSpec, resume: bool, stopAt: nullable(posInt), extendTo: nullable(posInt) },
  'train/pause': {},
  'train/resume': {},
  'train/stop': {},
};

const WORKER_TO_HOST: { readonly [K in WorkerToHost['type']]: Record<string, Check> } = {
  'worker/ready': {},
  'train/didLog': { level: oneOf('info', 'warn'), message: str },
  'train/didProgress': { phase: oneOf('read', 'tokenizer', 'encode'), done: nonNegInt, total: nonNegInt, message: str },
  'train/didStart': { runDir: str, startStep: nonNegInt, totalSteps: posInt, segments: runSegments, model: modelInfo, data: dataSummary },
  'train/didStep': stepMetrics,
  'train/didEval': evalMetrics,
  'train/didSnapshot': snapshot,
  'train/didSaveCheckpoint': { step: nonNegInt, path: str },
  'train/didPause': { step: nonNegInt },
  'train/didResume': { step: nonNegInt },
  'train/didFinish': { step: nonNegInt, reason: oneOf('completed', 'stopped') },
  'train/didFail': { step: nonNegInt, error: errorData },
};

function validateWith<T extends { type: string }>(table: { readonly [type: string]: Record<string, Check> }, msg: unknown, where: string): T {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) fail(where, 'a message object', msg);
  const type = (msg as { type?: unknown }).type;
  if (typeof type !== 'string') fail(`${where}.type`, 'a message type', type);
  const fields = Object.prototype.hasOwnProperty.call(table, type) ? table[type] : undefined;
  if (!fields) throw new ProtocolError(`${where}.type: unknown message type ${JSON.stringify(type)}; known: ${Object.keys(table).join(', ')}`);
  obj(fields)(msg, `${where}(${type})`);
  return msg as T;
}

/** Validates a command arriving at the worker; throws ProtocolError. */
export function validateHostToWorker(msg: unknown): HostToWorker {
  return validateWith<HostToWorker>(HOST_TO_WORKER, msg, 'message');
}

/** Validates a notification arriving from the worker; throws ProtocolError. */
export function validateWorkerToHost(msg: unknown): WorkerToHost {
  return validateWith<WorkerToHost>(WORKER_TO_HOST, msg, 'message');
}

/** Validates a TrainSpec (e.g. read back from run.json); throws ProtocolError. */
export function validateTrainSpec(spec: unknown, where = 'spec'): TrainSpec {
  trainSpec(spec, where);
  return spec as TrainSpec;
}

/** Validates a run's schedule segments (e.g. read back from run.json); throws ProtocolError. */
export function validateRunSegments(v: unknown, where = 'segments'): readonly RunSegment[] {
  runSegments(v, where);
  return v as readonly RunSegment[];
}

/** Validates a line of metrics.jsonl. */
export function validateStepMetrics(v: unknown, where = 'metrics'): StepMetrics {
  obj(stepMetrics)(v, where);
  return v as StepMetrics;
}

/** Validates an attention snapshot (e.g. read back from snapshots). */
export function validateSnapshot(v: unknown, where = 'snapshot'): AttentionSnapshot {
  obj(snapshot)(v, where);
  return v as AttentionSnapshot;
}

/** Validates model info. */
export function validateModelInfo(v: unknown, where = 'model'): ModelInfo {
  modelInfo(v, where);
  return v as ModelInfo;
}

/* ------------------------------------------------------------------ webview validation */

const runStatus = oneOf('created', 'training', 'paused', 'completed', 'stopped', 'failed');
const runSummary = obj({
  id: str, name: str, runDir: str, status: runStatus, kind: oneOf(...MODEL_KINDS), step: nonNegInt,
  totalSteps: nonNegInt, segments: runSegments, bestValLoss: nullable(num), model: nullable(modelInfo), data: nullable(dataSummary),
});
const runState = obj({ run: runSummary, steps: arrayOf(obj(stepMetrics)), evals: arrayOf(obj(evalMetrics)), snapshots: arrayOf(obj(snapshot)) });
const workerEvent: Check = (v, p) => {
  validateWith<WorkerToHost>(WORKER_TO_HOST, v, p);
};
const decodeParams = obj({
  input: str, strategy: oneOf('greedy', 'beam', 'sample'), beam: posInt, lengthPenalty: num, temperature: num, topK: nonNegInt,
  topP: num, maxTokens: posInt, seed: int,
});
const decodeAttention = obj({ queryStart: nonNegInt, queries: nonNegInt, selfKeys: nonNegInt, sourceLength: nonNegInt, nHeads: posInt, self: arrayOf(f32), cross: arrayOf(f32) });
const decodeOutput = obj({
  text: str, promptTokens: arrayOf(str), tokens: arrayOf(str), ids: arrayOf(int), logprobs: arrayOf(num), score: num,
  attention: nullable(decodeAttention), beams: arrayOf(obj({ text: str, score: num })),
});

const HOST_TO_WEBVIEW: { readonly [K in HostToWebview['type']]: Record<string, Check> } = {
  'dashboard/didLoadRuns': { runs: arrayOf(runState), selectedId: nullable(str) },
  'run/didUpdate': { runId: str, event: workerEvent },
  'decode/didToken': { id: nonNegInt, token: str, logprob: num },
  'decode/didFinish': { id: nonNegInt, output: decodeOutput },
  'decode/didFail': { id: nonNegInt, error: errorData },
  'playground/didDecode': { runId: str, params: decodeParams, output: decodeOutput },
  'dashboard/show': { runId: nullable(str), tab: oneOf('curves', 'attention', 'masks', 'model', 'playground') },
};

const WEBVIEW_TO_HOST: { readonly [K in WebviewToHost['type']]: Record<string, Check> } = {
  'webview/ready': {},
  'webview/didError': { message: str },
  'decode/request': { id: nonNegInt, runId: str, params: decodeParams },
  'train/control': { runId: str, action: oneOf('pause', 'resume', 'stop') },
};

/** Validates a message arriving in the dashboard; throws ProtocolError. */
export function validateHostToWebview(msg: unknown): HostToWebview {
  return validateWith<HostToWebview>(HOST_TO_WEBVIEW, msg, 'message');
}

/** Validates a message arriving from the dashboard; throws ProtocolError. */
export function validateWebviewToHost(msg: unknown): WebviewToHost {
  return validateWith<WebviewToHost>(WEBVIEW_TO_HOST, msg, 'message');
}

/* ------------------------------------------------------------------ model worker validation */

const sharedFlag: Check = (v, p) => {
  if (!(v instanceof Int32Array) || v.length < 1 || !(v.buffer instanceof SharedArrayBuffer)) fail(p, 'an Int32Array on a SharedArrayBuffer', v);
};
const evalFilesData: Check = (v, p) => {
  obj({ kind: oneOf('documents', 'pairs') })(v, p);
  if ((v as { kind: string }).kind === 'documents') obj({ paths: arrayOf(str), cwd: str, glob: bool, maxFileBytes: optional(posInt), maxTotalBytes: optional(posInt) })(v, p);
  else obj({ source: str, target: nullable(str) })(v, p);
};
const evalFilesOutput = obj({
  kind: oneOf('documents', 'pairs'), source: str, step: nonNegInt, context: posInt, loss: finiteOrNaN, ppl: finiteOrNaN, tokens: nonNegInt,
  documents: nonNegInt, pairs: nonNegInt, pairsTooLong: nonNegInt, decoded: nonNegInt, exactMatch: nullable(num), bleu: nullable(num),
  skipped: arrayOf(skippedFile), characters: nonNegInt, unseenChars: nullable(nonNegInt), unseenExamples: arrayOf(str),
});
const scoreOutput = obj({ tokens: arrayOf(str), logprobs: arrayOf(finiteOrNaN), starts: arrayOf(nonNegInt), ends: arrayOf(nonNegInt), truncated: nonNegInt });

const HOST_TO_MODEL_WORKER: { readonly [K in HostToModelWorker['type']]: Record<string, Check> } = {
  'model/decode': { id: nonNegInt, runDir: str, params: decodeParams },
  'model/score': { id: nonNegInt, runDir: str, source: nullable(str), text: str },
  'model/attend': { id: nonNegInt, runDir: str, text: str },
  'model/export': { id: nonNegInt, runDir: str, outDir: str },
  'model/calibrate': { id: nonNegInt, spec: trainSpec, vocabSize: posInt },
  'model/evaluateFiles': { id: nonNegInt, runDir: str, data: evalFilesData, maxPairs: posInt, cancel: sharedFlag },
};

const MODEL_WORKER_TO_HOST: { readonly [K in ModelWorkerToHost['type']]: Record<string, Check> } = {
  'worker/ready': {},
  'model/didToken': { id: nonNegInt, token: str, logprob: num },
  'model/didDecode': { id: nonNegInt, output: decodeOutput },
  'model/didScore': { id: nonNegInt, output: scoreOutput },
  'model/didAttend': { id: nonNegInt, snapshot: obj(snapshot) },
  'model/didExport': { id: nonNegInt, output: obj({ files: arrayOf(str), tensors: nonNegInt, warnings: arrayOf(str) }) },
  'model/didCalibrate': { id: nonNegInt, secondsPerStep: num, flopsPerSec: num, backend: str },
  'model/didProgress': { id: nonNegInt, done: nonNegInt, total: nonNegInt },
  'model/didEvaluateFiles': { id: nonNegInt, output: evalFilesOutput },
  'model/didFail': { id: nonNegInt, error: errorData },
};

/** Validates a request arriving at the model worker; throws ProtocolError. */
export function validateHostToModelWorker(msg: unknown): HostToModelWorker {
  return validateWith<HostToModelWorker>(HOST_TO_MODEL_WORKER, msg, 'message');
}

/** Validates a response arriving from the model worker; throws ProtocolError. */
export function validateModelWorkerToHost(msg: unknown): ModelWorkerToHost {
  return validateWith<ModelWorkerToHost>(MODEL_WORKER_TO_HOST, msg, 'message');
}
