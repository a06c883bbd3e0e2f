/**
 * Checkpoints: model.safetensors (every parameter, fp32, under the model's own names, with
 * the config and step in the metadata) and optimizer.safetensors (Adam's moments and step;
 * with Muon, its momentum in `adam.m` over the hidden matrices, the config saying which) for
 * exact resume. Both are written in full as temporary files, then renamed into place,
 * optimizer first, model second, each atomically, so the model file is always complete; the
 * step recorded in both tells a reader whether they belong together. A writer killed between
 * the two renames leaves the other file of the new pair complete in its temporary file, and a
 * resume puts the newest whole pair in place (recovery.ts). Readers check format, version,
 * dtype and shape of everything and say what to do.
 */

import type { ModelConfig } from '../../engine/config';
import { CONFIG_FIELDS, validateConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import { encodeSafetensors, layoutF32Safetensors } from '../../engine/io/safetensors';
import { SafetensorsReader } from './safetensorsReader';
import type { Transformer } from '../../engine/models/transformer';
import type { Optimizer } from '../../engine/optim/optimizer';
import type { LabFs } from '../files/labFs';
import { exists } from '../files/labFs';
import { RUN_FILES } from './runFolder';

export const CHECKPOINT_FORMAT = 'attention-lab-checkpoint';
export const CHECKPOINT_VERSION = '1';

/**
 * Writes optimizer.safetensors and model.safetensors as one pair: both are written and flushed
 * before either replaces the old one, so a window reload (which ends the worker at any moment)
 * or a full disk while a checkpoint is being written leaves the previous pair, from one step,
 * to resume from (a full disk throws lab/files/fileErrors.ts's DiskFullError). With
 * `laidOut` (layOutModelCheckpoint's bytes, the parameters views into them) model.safetensors is
 * those bytes, written without encoding a copy.
 */
export async function saveCheckpoint(
  fs: LabFs,
  runDir: string,
  model: Transformer,
  optimizer: Optimizer | null,
  step: number,
  opts: { readonly laidOut?: Uint8Array } = {},
): Promise<string> {
  const meta = checkpointMetadata(step);
  const files: { path: string; data: Uint8Array }[] = [];
  if (optimizer) {
    const st = optimizer.state();
    const bytes = encodeSafetensors(
      [
        { name: 'adam.m', dtype: 'F32', shape: [st.m.length], data: st.m },
        { name: 'adam.v', dtype: 'F32', shape: [st.v.length], data: st.v },
      ],
      { ...meta, kind: 'optimizer', optimizerStep: String(st.step), optimizer: JSON.stringify(optimizer.config) },
    );
    files.push({ path: fs.join(runDir, RUN_FILES.optimizer), data: bytes });
  }
  const file = fs.join(runDir, RUN_FILES.model);
  const laidOut = opts.laidOut;
  if (laidOut && model.paramList.some((p) => p.data.buffer !== laidOut.buffer))
    throw new Error('saveCheckpoint: laidOut needs every parameter to be a view into it (layOutModelCheckpoint)');
  const tensors = model.paramList.map((p) => ({ name: p.name, dtype: 'F32' as const, shape: p.shape, data: p.data }));
  files.push({ path: file, data: laidOut ?? encodeSafetensors(tensors, modelMetadata(model, step)) });
  await fs.writeFiles(files);
  return file;
}

/** The metadata every checkpoint file of `step` carries. */
function checkpointMetadata(step: number): Record<string, string> {
  return { format: CHECKPOINT_FORMAT, version: CHECKPOINT_VERSION, step: String(step) };
}

/** model.safetensors' metadata of `model` at `step`. */
function modelMetadata(model: Transformer, step: number): Record<string, string> {
  return { ...checkpointMetadata(step), kind: 'model', config: JSON.stringify(model.config) };
}

/**
 * model.safetensors of an unbound `model` at `step`, laid out before a weight exists: every parameter's array
 * becomes a view into the file's bytes, so the weights read into them fill the file, and saveCheckpoint(…,
 * { laidOut }) writes those bytes as they are — an import holds Qwen2.5-0.5B's 2 GB of weights once, not once in
 * the model and again in the file. Null on a big-endian host (the parameters keep their own arrays).
 */
export function layOutModelCheckpoint(model: Transformer, step: number): Uint8Array | null {
  const laid = layoutF32Safetensors(model.paramList, modelMetadata(model, step));
  if (!laid) return null;
  model.paramList.forEach((p, i) => (p.data = laid.views[i] as Float32Array));
  return laid.bytes;
}

/** Throws unless `metadata` is an Attention Lab checkpoint's of this version. */
function checkFormat(file: string, metadata: Readonly<Record<string, string>>): void {
  if (metadata.format !== CHECKPOINT_FORMAT) {
    throw new EngineError(
      'checkpoint/invalid',
      `${file} is not an Attention Lab checkpoint (format ` +
        `${JSON.stringify(metadata.format ?? null)}); use \`attention-lab export\` files only for ` +
        `PyTorch, and pass a run folder here.`,
    );
  }
  if (metadata.version !== CHECKPOINT_VERSION) {
    throw new EngineError(
      'checkpoint/invalid',
      `${file} was written by a different version of Attention Lab (checkpoint version ` +
        `${JSON.stringify(metadata.version)}; this version reads ${CHECKPOINT_VERSION}); use the ` +
        `matching version or retrain.`,
    );
  }
}

function stepOf(metadata: Readonly<Record<string, string>>, source: string): number {
  const step = Number(metadata.step);
  if (!Number.isInteger(step) || step < 0)
    throw new EngineError(
      'checkpoint/invalid',
      `${source} has no valid step in its metadata; the file is damaged — retrain.`,
    );
  return step;
}

/**
 * A model checkpoint file (a run's model.safetensors or a snapshot's weights), opened with only
 * its header read (format and version checked):
 * its tensors are read one at a time, each straight into where it goes.
 */
async function openModelFile(fs: LabFs, file: string, what = 'model'): Promise<SafetensorsReader> {
  if (!(await exists(fs, file)))
    throw new EngineError(
      'checkpoint/invalid',
      `${file} is missing; the run has no ${what} checkpoint yet — train it first (or resume from a ` +
        `run that saved one).`,
    );
  const f = await SafetensorsReader.open(fs, file);
  checkFormat(file, f.header.metadata);
  return f;
}

/** Fields that regularize training only: the same weights mean the same model whatever they are. */
const TRAINING_ONLY: ReadonlySet<keyof ModelConfig> = new Set(['dropout', 'labelSmoothing']);

/**
 * Throws unless the config saved in checkpoint `file` is the model `expected` describes
 * (run.json's config; every field but dropout and label smoothing), naming what differs: a
 * model.safetensors copied in from another run would otherwise be evaluated or exported as
 * if it were this run's.
 */
export function checkCheckpointConfig(file: string, saved: ModelConfig, expected: ModelConfig): void {
  const differ = CONFIG_FIELDS.filter((k) => !TRAINING_ONLY.has(k) && saved[k] !== expected[k]);
  if (differ.length === 0) return;
  const shown = differ
    .slice(0, 3)
    .map((k) => `${k} ${String(saved[k])} in the checkpoint, ${String(expected[k])} in run.json`)
    .join('; ');
  throw new EngineError(
    'checkpoint/invalid',
    `${file} is not this run's model (${shown}${differ.length > 3 ? '; …' : ''}); restore the run's ` +
      `own model.safetensors, or open the run the checkpoint came from.`,
  );
}

/**
 * The step of a complete checkpoint file of ours of `kind` (its header read and checked
 * against the file's length), or null for anything else: a file cut off, another format or
 * version, the other kind.
 */
export async function checkpointFileStep(fs: LabFs, file: string, kind: 'model' | 'optimizer'): Promise<number | null> {
  try {
    const meta = (await SafetensorsReader.open(fs, file)).header.metadata;
    checkFormat(file, meta);
    if (meta.kind !== undefined && meta.kind !== kind) return null;
    return stepOf(meta, file);
  } catch {
    return null;
  }
}

/** The config saved in a run's model.safetensors (read from its header alone). */
export async function readCheckpointConfig(fs: LabFs, runDir: string): Promise<{ config: ModelConfig; step: number }> {
  const f = await openModelFile(fs, fs.join(runDir, RUN_FILES.model));
  const source = fs.basename(f.file);
  return { config: configOf(f, source), step: stepOf(f.header.metadata, source) };
}

/** The model config in a checkpoint's metadata, validated. */
function configOf(f: SafetensorsReader, source: string): ModelConfig {
  try {
    return validateConfig(JSON.parse(f.header.metadata.config ?? 'null') as ModelConfig);
  } catch (e) {
    throw new EngineError(
      'checkpoint/invalid',
      `${source} has an invalid config in its metadata (${(e as Error).message}); retrain.`,
      { cause: e },
    );
  }
}

/**
 * Loads model.safetensors into `model`, each tensor read straight into its parameter (every
 * tensor checked for dtype and shape first, as `expectTensor` checks). Returns the step.
 */
export async function loadModelCheckpoint(fs: LabFs, runDir: string, model: Transformer): Promise<number> {
  return loadModelFile(fs, fs.join(runDir, RUN_FILES.model), model);
}

/**
 * Loads a model checkpoint file of ours (model.safetensors, or a snapshot's weights) into
 * `model`, as `loadModelCheckpoint` does. Returns its step.
 */
export async function loadModelFile(fs: LabFs, file: string, model: Transformer): Promise<number> {
  const f = await openModelFile(fs, file);
  const source = fs.basename(f.file);
  checkCheckpointConfig(file, configOf(f, source), model.config);
  const fix = 'it was written by a different model config — load it with the config it was saved with, or retrain';
  for (const p of model.paramList) {
    const e = f.entry(p.name);
    if (!e) throw new EngineError('checkpoint/invalid', `${source} has no tensor ${JSON.stringify(p.name)}; ${fix}.`);
    if (e.dtype !== 'F32')
      throw new EngineError(
        'checkpoint/invalid',
        `${source}: tensor ${JSON.stringify(p.name)} is ${e.dtype} but F32 was expected; ${fix}.`,
      );
    if (e.shape.length !== p.shape.length || e.shape.some((d, i) => d !== p.shape[i])) {
      throw new EngineError(
        'checkpoint/invalid',
        `${source}: tensor ${JSON.stringify(p.name)} has shape [${e.shape.join(', ')}] but ` +
          `[${p.shape.join(', ')}] was expected; ${fix}.`,
      );
    }
  }
  const extra = f.names.filter((n) => !model.paramList.some((p) => p.name === n));
  if (extra.length)
    throw new EngineError(
      'checkpoint/invalid',
      `${source} has tensors this model lacks (${extra.slice(0, 3).join(', ')}); it was saved with a different config.`,
    );
  for (const p of model.paramList) await f.readF32Into(p.name, p.data);
  return stepOf(f.header.metadata, source);
}

/** An optimizer type's name and the optimizer preset (run.json's training.optimizer) that trains with it. */
const OPTIMIZER_NAMES: Readonly<Record<string, readonly [string, string]>> = {
  adam: ['Adam', 'paper'],
  adamw: ['AdamW', 'adamw'],
  muon: ['Muon', 'muon'],
};

/**
 * Throws unless optimizer.safetensors (its `optimizer` metadata: the config it was saved with;
 * absent in files older than Muon, which were all Adam's) holds the kind of state `type` steps
 * from: Muon keeps its momentum where Adam(W) keeps first moments, and no second moments, so
 * resuming one from the other would not continue the run. Adam and AdamW share their state.
 */
export function checkOptimizerKind(source: string, savedConfig: string | undefined, type: string): void {
  let saved: unknown = 'adamw';
  try {
    if (savedConfig !== undefined) saved = (JSON.parse(savedConfig) as { type?: unknown }).type;
  } catch {
    throw new EngineError(
      'checkpoint/invalid',
      `${source} has an unreadable optimizer config in its metadata; retrain.`,
    );
  }
  if ((saved === 'muon') === (type === 'muon')) return;
  const [was, wasPreset] = OPTIMIZER_NAMES[String(saved)] ?? [String(saved), String(saved)];
  const [now, nowPreset] = OPTIMIZER_NAMES[type] ?? [type, type];
  throw new EngineError(
    'checkpoint/invalid',
    `${source} holds ${was}'s optimizer state but this run now trains with ${now}; resume it with optimizer ` +
      `${wasPreset} (training.optimizer in run.json), or start a new run to train with ${nowPreset}.`,
  );
}

/** Loads optimizer.safetensors into `optimizer`; its step must equal the model's (at step 0 the file may be absent). */
export async function loadOptimizerCheckpoint(
  fs: LabFs,
  runDir: string,
  optimizer: Optimizer,
  modelStep: number,
): Promise<void> {
  // A run at step 0 without optimizer state (an imported model) starts from Adam's zero moments, which is exact.
  if (modelStep === 0 && !(await exists(fs, fs.join(runDir, RUN_FILES.optimizer)))) return;
  // Read in pieces, each tensor straight into its array: the file may pass the 2 GiB a whole read allows.
  const f = await openModelFile(fs, fs.join(runDir, RUN_FILES.optimizer), 'optimizer');
  const source = fs.basename(f.file);
  const step = stepOf(f.header.metadata, source);
  if (step !== modelStep) {
    throw new EngineError(
      'checkpoint/invalid',
      `optimizer.safetensors is from step ${step} but model.safetensors from step ${modelStep} (the ` +
        `process was stopped between the two writes); resume would not be exact — start a new run ` +
        `from this model or retrain.`,
    );
  }
  checkOptimizerKind(source, f.header.metadata.optimizer, optimizer.config.type);
  const n = optimizer.state().m.length;
  const [m, v] = (await Promise.all(
    ['adam.m', 'adam.v'].map(async (name) => {
      const e = f.entry(name);
      const fix = 'it was written by a different model config — load it with the config it was saved with, or retrain';
      if (!e) throw new EngineError('checkpoint/invalid', `${source} has no tensor ${JSON.stringify(name)}; ${fix}.`);
      if (e.dtype !== 'F32' || e.shape.length !== 1 || e.shape[0] !== n) {
        throw new EngineError(
          'checkpoint/invalid',
          `${source}: tensor ${JSON.stringify(name)} is ${e.dtype} [${e.shape.join(', ')}] but F32 ` +
            `[${n}] was expected; ${fix}.`,
        );
      }
      const out = new Float32Array(n);
      await f.readF32Into(name, out);
      return out;
    }),
  )) as [Float32Array, Float32Array];
  const optStep = Number(f.header.metadata.optimizerStep);
  try {
    optimizer.loadState({ step: Number.isInteger(optStep) ? optStep : step, m, v });
  } catch (e) {
    if (EngineError.is(e)) throw new EngineError(e.code, `${source}: ${e.message}`, { cause: e });
    throw e;
  }
}
