/**
 * A run folder on disk (docs/ARCHITECTURE.md, "Files on disk"): run.json (what the run is and
 * where it stands), metrics.jsonl (append-only, one JSON object per logged step or
 * validation), evaluations.jsonl (append-only, one line per evaluation on test data:
 * lab/runs/evaluations.ts), tokenizer.json, model.safetensors, optimizer.safetensors and
 * snapshots/. Every file but the append-only logs is written atomically; a log line is
 * appended in one piece. Every reader validates what it reads and
 * says what to do when a file is from another version or damaged.
 */

import type { ModelConfig } from '../../engine/config';
import { validateConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import type { ImportLayout } from '../../engine/models/importLayouts';
import { IMPORT_LAYOUTS } from '../../engine/models/importLayouts';
import type { HfSource } from '../../engine/models/hfFamilies';
import { HF_FAMILIES } from '../../engine/models/hfFamilies';
import type { DataSummary, ErrorData, EvalMetrics, RunSegment, StepMetrics, TrainSpec } from '../../protocol/data';
import { ProtocolError } from '../../protocol/schema';
import { dataSummary, validateRunSegments, validateStepMetrics, validateTrainSpec } from '../../protocol/data';
import type { LabFs } from '../files/labFs';
import { completeLines, exists, writeFile } from '../files/labFs';
import { readCappedText } from '../files/fileCaps';
import { planSegments, segmentsProblem } from './segments';

export const RUN_FORMAT = 'attention-lab-run';
export const RUN_VERSION = 1;

/** File names inside a run folder. */
export const RUN_FILES = {
  run: 'run.json',
  metrics: 'metrics.jsonl',
  evaluations: 'evaluations.jsonl',
  tokenizer: 'tokenizer.json',
  model: 'model.safetensors',
  optimizer: 'optimizer.safetensors',
  snapshots: 'snapshots',
} as const;

export type RunStatus = 'created' | 'training' | 'paused' | 'completed' | 'stopped' | 'failed';

/** Contents of run.json. */
export interface RunJson {
  readonly format: typeof RUN_FORMAT;
  readonly version: typeof RUN_VERSION;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly status: RunStatus;
  /** What the run is; `spec.training.steps` is the planned total, which extending raises. */
  readonly spec: TrainSpec;
  readonly config: ModelConfig;
  /**
   * The learning-rate schedule's segments: the original plan, then one per extension
   * (segments.ts). A run.json from before segments existed has none and reads as one.
   */
  readonly segments: readonly RunSegment[];
  /** Step of the last checkpoint (0 before the first). */
  readonly step: number;
  readonly bestValLoss: number | null;
  readonly data: DataSummary;
  readonly error: ErrorData | null;
  /**
   * The name the user gave the run (the folder keeps its own name: it is the run's id in
   * the editor's state, the CLI's arguments and the worker that may be writing into it).
   */
  readonly displayName?: string;
  /** The user's note on the run. */
  readonly note?: string;
  /** The kernel backend the last training session ran on (`spec.backend` may say "auto"). */
  readonly backendUsed?: string;
  /** Why `auto` chose that backend ("auto: … is a software adapter, …"); absent for a backend named outright. */
  readonly backendChoice?: string;
  /** Threads the last training session's kernels ran on (absent in runs from before it was recorded). */
  readonly threadsUsed?: number;
  /** Set on a run made by `import`: the checkpoint's layout and file (the model was not trained here). */
  readonly imported?: { readonly layout: ImportLayout; readonly from: string };
  /** Set on a run imported from a Hugging Face family's folder: the model's own name, architecture and family. */
  readonly source?: HfSource;
}

function invalid(file: string, what: string): EngineError {
  return new EngineError('checkpoint/invalid', `${file}: ${what}`);
}

/** Reads and validates run.json of `runDir`. */
export async function readRunJson(fs: LabFs, runDir: string): Promise<RunJson> {
  const file = fs.join(runDir, RUN_FILES.run);
  if (!(await exists(fs, file)))
    throw new EngineError(
      'input/invalid',
      `${runDir} is not a run folder (no run.json); pass the folder a training run created.`,
    );
  const text = await readCappedText(fs, file, 'run.json');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw invalid(
      file,
      `is not valid JSON (${(e as Error).message}); the file is damaged — restore it or start a new run.`,
    );
  }
  if (typeof raw !== 'object' || raw === null) throw invalid(file, 'is not a JSON object; start a new run.');
  const r = raw as Record<string, unknown>;
  if (r.format !== RUN_FORMAT)
    throw invalid(file, `is not an Attention Lab run file (format ${JSON.stringify(r.format)}); pass a run folder.`);
  if (r.version !== RUN_VERSION) {
    throw invalid(
      file,
      `was written by a different version of Attention Lab (run format version ` +
        `${JSON.stringify(r.version)}; this version reads ${RUN_VERSION}); use the matching version ` +
        `or start a new run.`,
    );
  }
  try {
    validateTrainSpec(r.spec, 'spec');
  } catch (e) {
    if (e instanceof ProtocolError)
      throw invalid(file, `${e.message}; the file is damaged or from another version — start a new run.`);
    throw e;
  }
  try {
    dataSummary.check(r.data, 'data'); // what the run trains on: eval, reports and the dashboard read it
  } catch (e) {
    if (e instanceof ProtocolError)
      throw invalid(file, `${e.message}; the file is damaged — restore it or start a new run.`);
    throw e;
  }
  try {
    r.config = validateConfig(r.config as ModelConfig); // an older run.json gains today's fields, all off
  } catch (e) {
    throw invalid(file, `has an invalid model config: ${(e as Error).message}`);
  }
  const statuses: RunStatus[] = ['created', 'training', 'paused', 'completed', 'stopped', 'failed'];
  if (!statuses.includes(r.status as RunStatus))
    throw invalid(file, `has an unknown status ${JSON.stringify(r.status)}.`);
  if (typeof r.step !== 'number' || !Number.isInteger(r.step) || r.step < 0) throw invalid(file, 'has no valid step.');
  if (r.threadsUsed !== undefined && !(Number.isInteger(r.threadsUsed) && (r.threadsUsed as number) >= 1))
    throw invalid(
      file,
      `has threadsUsed that is not a whole number ≥ 1 (${JSON.stringify(r.threadsUsed)}); fix or remove it.`,
    );
  for (const k of ['displayName', 'note', 'backendUsed', 'backendChoice'] as const) {
    if (r[k] !== undefined && typeof r[k] !== 'string')
      throw invalid(file, `has a ${k} that is not a string (${JSON.stringify(r[k])}); fix or remove it.`);
  }
  const imp = r.imported as { layout?: unknown; from?: unknown } | undefined;
  if (
    imp !== undefined &&
    (typeof imp !== 'object' ||
      imp === null ||
      typeof imp.from !== 'string' ||
      !Object.hasOwn(IMPORT_LAYOUTS, String(imp.layout)))
  ) {
    throw invalid(
      file,
      `has an "imported" entry that is not {layout, from} (${JSON.stringify(imp)}); fix or remove it.`,
    );
  }
  const src = r.source as Partial<Record<keyof HfSource, unknown>> | undefined;
  if (
    src !== undefined &&
    (typeof src !== 'object' ||
      src === null ||
      typeof src.name !== 'string' ||
      typeof src.architecture !== 'string' ||
      !Object.hasOwn(HF_FAMILIES, String(src.family)))
  ) {
    throw invalid(
      file,
      `has a "source" entry that is not {name, architecture, family} (${JSON.stringify(src)}); fix or remove it.`,
    );
  }
  const spec = r.spec as TrainSpec;
  if (r.segments === undefined) return { ...(raw as RunJson), segments: planSegments(spec) };
  try {
    validateRunSegments(r.segments, 'segments');
  } catch (e) {
    if (e instanceof ProtocolError)
      throw invalid(file, `${e.message}; the file is damaged — restore it or start a new run.`);
    throw e;
  }
  const problem = segmentsProblem(r.segments as RunSegment[], spec);
  if (problem)
    throw invalid(file, `has inconsistent segments: ${problem}; the file is damaged — restore it or start a new run.`);
  return raw as RunJson;
}

/** Writes run.json atomically. */
export function writeRunJson(fs: LabFs, runDir: string, run: RunJson): Promise<void> {
  return writeFile(fs, fs.join(runDir, RUN_FILES.run), `${JSON.stringify(run, null, 2)}\n`);
}

/** Updates some fields of run.json (and its timestamp). */
export async function updateRunJson(
  fs: LabFs,
  runDir: string,
  patch: Partial<
    Pick<
      RunJson,
      | 'status'
      | 'step'
      | 'bestValLoss'
      | 'error'
      | 'spec'
      | 'segments'
      | 'backendUsed'
      | 'backendChoice'
      | 'threadsUsed'
    >
  >,
): Promise<RunJson> {
  const run = { ...(await readRunJson(fs, runDir)), ...patch, updatedAt: new Date().toISOString() };
  await writeRunJson(fs, runDir, run);
  return run;
}

/** The longest display name a run takes. */
export const MAX_RUN_NAME = 80;

/** Why `name` cannot name a run, or null ('' is fine: it goes back to the folder's name). */
export function runNameProblem(name: string): string | null {
  const n = name.trim();
  if (/[\r\n\t]/.test(n)) return 'A run name is one line: remove the line breaks and tabs.';
  if (n.length > MAX_RUN_NAME)
    return (
      `A run name has at most ${MAX_RUN_NAME} characters; this one has ${n.length}. Shorten it ` +
      `(the note can say more).`
    );
  return null;
}

/**
 * Sets the run's display name and/or note ('' removes it). The folder is not renamed and
 * `updatedAt` is kept (it orders the runs by training, not by naming). The write is atomic;
 * a training worker updating run.json at the same moment rereads it before each write.
 */
export async function setRunLabel(
  fs: LabFs,
  runDir: string,
  label: { readonly displayName?: string; readonly note?: string },
): Promise<RunJson> {
  const problem = label.displayName === undefined ? null : runNameProblem(label.displayName);
  if (problem) throw new EngineError('input/invalid', problem);
  const { displayName, note, ...rest } = await readRunJson(fs, runDir);
  const name = (label.displayName ?? displayName ?? '').trim();
  const text = (label.note ?? note ?? '').trim();
  const run: RunJson = { ...rest, ...(name ? { displayName: name } : {}), ...(text ? { note: text } : {}) };
  await writeRunJson(fs, runDir, run);
  return run;
}

/**
 * Sets the documents an imported run fine-tunes on (`train --resume`, the editor's
 * Fine-tune…): `files` (absolute paths of `fs`), `root` the folder their paths are shown relative to.
 * Only a decoder-only run's documents can be set this way.
 */
export async function setFineTuneData(
  fs: LabFs,
  runDir: string,
  files: readonly string[],
  root: string,
): Promise<RunJson> {
  const run = await readRunJson(fs, runDir);
  if (run.spec.data.kind !== 'documents')
    throw new EngineError(
      'input/invalid',
      `${fs.basename(runDir)} trains on ${run.spec.data.kind}, not documents; fine-tune it with its own data.`,
    );
  if (files.length === 0) throw new EngineError('input/invalid', 'Pick at least one file to fine-tune on.');
  const next: RunJson = { ...run, spec: { ...run.spec, data: { ...run.spec.data, files: [...files], root } } };
  await writeRunJson(fs, runDir, next);
  return next;
}

/** One line of metrics.jsonl. */
export type MetricsLine = ({ readonly type: 'step' } & StepMetrics) | ({ readonly type: 'eval' } & EvalMetrics);

/** Appends one line to metrics.jsonl in one piece (a crash can only tear the last line, which readers skip). */
export function appendMetrics(fs: LabFs, runDir: string, line: MetricsLine): Promise<void> {
  return fs.appendLine(fs.join(runDir, RUN_FILES.metrics), `${JSON.stringify(line)}\n`);
}

/** Every step and evaluation logged so far, skipping lines a crash tore. */
export async function readMetrics(
  fs: LabFs,
  runDir: string,
): Promise<{ steps: StepMetrics[]; evals: EvalMetrics[]; skipped: number }> {
  const file = fs.join(runDir, RUN_FILES.metrics);
  const steps: StepMetrics[] = [];
  const evals: EvalMetrics[] = [];
  let skipped = 0;
  if (!(await exists(fs, file))) return { steps, evals, skipped };
  for (const text of completeLines(await readCappedText(fs, file, 'metrics log'))) {
    try {
      const v = JSON.parse(text) as Record<string, unknown>;
      if (v.type === 'step') steps.push(validateStepMetrics(v));
      else if (v.type === 'eval' && typeof v.step === 'number' && typeof v.loss === 'number')
        evals.push(v as unknown as EvalMetrics);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { steps, evals, skipped };
}

/** Drops metrics logged after `step` (work lost with the process that logged it), atomically. */
export async function truncateMetrics(fs: LabFs, runDir: string, step: number): Promise<void> {
  const file = fs.join(runDir, RUN_FILES.metrics);
  if (!(await exists(fs, file))) return;
  const keep = completeLines(await readCappedText(fs, file, 'metrics log')).filter((text) => {
    try {
      const v = JSON.parse(text) as { step?: unknown };
      return typeof v.step === 'number' && v.step <= step;
    } catch {
      return false;
    }
  });
  await writeFile(fs, file, keep.length ? `${keep.join('\n')}\n` : '');
}

/** A fresh, unused run folder name under `parent`: run-YYYYMMDD-HHMMSS[-n]. */
export async function newRunDir(fs: LabFs, parent: string, now = new Date()): Promise<string> {
  const pad = (n: number): string => String(n).padStart(2, '0');
  const stamp =
    `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-` +
    `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  let dir = fs.join(parent, `run-${stamp}`);
  for (let i = 2; await exists(fs, dir); i++) dir = fs.join(parent, `run-${stamp}-${i}`);
  return dir;
}
