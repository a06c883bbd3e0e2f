/**
 * The start and the failure of a training session, the same for both engines: create the run
 * folder or reopen it to resume ({@link prepareSession}), and, when anything fails, record it
 * in run.json — or remove a folder that held nothing yet — and tell the host
 * ({@link reportFailure}).
 *
 * Leaves out: the steps themselves (session.ts for ours, src/lab/pytorch/ for PyTorch's).
 */

import type { Backend } from '../../engine/backend';
import type { WebGpuBackend } from '../../engine/backends/webgpu/webgpuBackend';
import { createWebGpuBackend } from '../../engine/backends/webgpu/webgpuBackend';
import { EngineError } from '../../engine/errors';
import type { ModelConfig } from '../../engine/config';
import { Transformer } from '../../engine/models/transformer';
import { checkMemory, mostRowsThatFit } from '../runs/memoryCheck';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { Trainer } from '../../engine/train';
import { estimateModel } from '../../engine/models/estimate';
import type { PytorchOptions, RunSegment } from '../../protocol/data';
import type { ModelInfo } from '../../protocol/model';
import type { ToTrainingWorker } from '../../protocol/trainingWorker';
import type { LabFs } from '../files/labFs';
import { KEPT_FILE, TEMP_FILE, exists, listNames, removeStaleTemps } from '../files/labFs';
import { DiskFullError, fileErrorData } from '../files/fileErrors';
import type { LabPlatform } from '../platform/platform';
import { yieldToEvents } from '../base/yieldToEvents';
import { loadModelCheckpoint, loadOptimizerCheckpoint } from '../runs/checkpoint';
import type { Dataset } from '../data/dataset';
import { STREAMS, stepRng } from '../data/dataset';
import { skippedNote } from '../data/corpus';
import type { ErrorCode } from '../base/errorCodes';
import { stopsRun } from '../base/errorCodes';
import type { WorkHooks } from '../data/documentData';
import { CancelledError } from '../base/cancelled';
import {
  backendFor,
  buildModel,
  buildOptimizer,
  datasetShape,
  modelPadId,
  optimizerConfig,
  resolveConfig,
  stateOptimizer,
} from '../runs/specModel';
import { buildDataset, dataSummary, loadRunData } from '../data/runData';
import { readTokenizer, writeTokenizer } from '../runs/tokenizerFile';
import type { RunJson } from '../runs/runFolder';
import {
  RUN_FILES,
  RUN_FORMAT,
  RUN_VERSION,
  readRunJson,
  truncateMetrics,
  updateRunJson,
  writeRunJson,
} from '../runs/runFolder';
import { isLockFile, lockMadeFolder } from '../runs/runLock';
import { recoverRunFolder } from '../runs/recovery';
import type { ResumePlan } from '../runs/segments';
import { describeSegment, planResume, planSegments, plannedWarmup } from '../runs/segments';
import type { Emit, SessionControl, SessionOptions } from './sessionControl';
import { diskFullMessage, gpuLostMessage, lastCheckpointStep } from './stopReasons';
import { openTrainingDevice } from './trainingDevice';

/** A run folder ready to train: its model, optimizer, data and where it starts. */
export interface PreparedSession {
  model: Transformer;
  trainer: Trainer;
  dataset: Dataset;
  tok: Tokenizer;
  startStep: number;
  info: ModelInfo;
  run: RunJson;
  /** True when the model was initialized from the seed (a new run, or one started over), not loaded. */
  fresh: boolean;
  /**
   * How much of the run folder the session owns now: all of it (a new run's folder it may
   * remove, or a resumed one).
   */
  own: Readonly<Ownership>;
  /**
   * Training on WebGPU: the backend (the step reads the loss back through it) and a copy of the model
   * on the CPU that evaluation and snapshots run on, its weights downloaded at their cadence; null otherwise.
   */
  gpu: { readonly backend: WebGpuBackend; readonly host: Transformer } | null;
}

/** Whether this session owns the run folder (created it, or resumed it), so may mark it failed. */
export interface Ownership {
  created: boolean;
  owned: boolean;
}

/** A session that owns nothing yet: a failure leaves the run folder as it was. */
export const NOT_OWNED: Readonly<Ownership> = { created: false, owned: false };

/** The train/start command (src/protocol/trainingWorker.ts), as a training worker receives it. */
type TrainStart = Extract<ToTrainingWorker, { type: 'train/start' }>;

/** What a session is asked to train: the train/start command's run folder, spec, limits and helper threads. */
export type SessionRequest = Pick<TrainStart, 'runDir' | 'spec' | 'resume' | 'stopAt' | 'extendTo' | 'helpers'>;

/**
 * A session's start on either engine, as the training worker hands it on: what to train (the
 * train/start command itself will do as the request), who pauses and stops it, and where its
 * notifications go.
 */
export interface SessionStart {
  readonly request: SessionRequest;
  readonly control: SessionControl;
  readonly emit: Emit;
  /** How it runs beyond the request (default: as every run a user starts). */
  readonly options?: SessionOptions;
}

/** A session's start on the PyTorch engine: the start, and the trainer's options (train/start's `pytorch`). */
export interface PytorchStart extends SessionStart {
  readonly pytorch: PytorchOptions;
}

/** Everything {@link prepareSession} needs: the request, and where and under whose control it runs. */
export interface SessionSetup extends SessionRequest {
  readonly platform: LabPlatform;
  readonly control: SessionControl;
  readonly emit: Emit;
  /** The engine that trains when it is not ours ("pytorch cpu ×2": run.json's backendUsed); absent = ours. */
  readonly otherEngine?: string;
}

/**
 * A failure while a session was set up, with how much of the run folder the session owned by
 * then, so {@link reportFailure} marks or removes exactly what it should.
 */
export class SetupFailure extends Error {
  constructor(
    readonly failure: unknown,
    readonly own: Readonly<Ownership>,
  ) {
    super(failure instanceof Error ? failure.message : String(failure));
    this.name = 'SetupFailure';
  }

  /** The error itself, unwrapped from a SetupFailure (what a caller rethrows or shows). */
  static errorOf(e: unknown): unknown {
    return e instanceof SetupFailure ? e.failure : e;
  }
}

/**
 * Creates the run folder (data read, tokenizer trained, model initialized from the seed,
 * run.json written, then the tokenizer — so a folder killed before run.json holds only
 * temporary files, which a new run in it removes) or reopens it to resume (the folder put
 * right after whatever stopped its writer (recovery.ts), plan checked before the folder is
 * taken over, checkpoint and optimizer state loaded, metrics past the checkpoint dropped; a
 * run stopped before its first checkpoint starts over from step 0 and says so). Both
 * engines start here, so a run is the same run whichever engine trains it. `otherEngine` names
 * the engine that trains when it is not ours ("pytorch cpu ×2": run.json's backendUsed); the
 * lab's model is then planned for the probe batch only, at the run's context, so a model far
 * too large for our engine's batch still prepares the run and draws its attention. Every file
 * is read and written through `platform`'s file system (a full disk: fileErrors.ts's
 * DiskFullError, nothing half-written); our engine's backend gets `helpers` of its threads.
 * A failure is thrown as a {@link SetupFailure} that says what the session owned by then.
 */
export async function prepareSession(setup: SessionSetup): Promise<PreparedSession> {
  const own: Ownership = { created: false, owned: false };
  try {
    return { ...(await prepareFolder(setup, own)), own };
  } catch (e) {
    throw new SetupFailure(e, { ...own });
  }
}

/** {@link prepareSession}'s work, recording in `own` what the session takes over as it goes. */
async function prepareFolder(setup: SessionSetup, own: Ownership): Promise<Omit<PreparedSession, 'own'>> {
  const { platform, runDir, resume, control, emit, stopAt, extendTo, helpers } = setup;
  const otherEngine = setup.otherEngine ?? null;
  let spec = setup.spec;
  const { fs } = platform;
  const log = (message: string, level: 'info' | 'warn' = 'info'): void =>
    emit({ type: 'train/didLog', level, message });
  let plan: ResumePlan | null = null;
  let startOver = false;
  let backendChanged = false;
  if (resume) {
    // Only puts back what a stopped writer left half-moved; the plan is checked before the
    // folder is taken over, so a refused resume leaves the run otherwise as it was.
    const recovered = await recoverRunFolder(fs, runDir);
    plan = planResume(await readRunJson(fs, runDir), fs.basename(runDir), extendTo, stopAt);
    // The backend is the request's: a run stopped by a lost GPU resumes on WebAssembly when asked to.
    backendChanged = plan.spec.backend !== setup.spec.backend;
    spec = { ...plan.spec, backend: setup.spec.backend };
    own.owned = true;
    startOver = recovered.checkpointStep === null && !recovered.hasModel;
    if (startOver) log('The run stopped before its first checkpoint was saved; starting it over from step 0.', 'warn');
  } else {
    if (extendTo !== null)
      throw new EngineError(
        'input/invalid',
        'Only a resumed run can be extended to more steps; pass --resume DIR with --steps.',
      );
    if (await exists(fs, fs.join(runDir, RUN_FILES.run))) {
      throw new EngineError(
        'input/invalid',
        `${runDir} already holds a run; pass --resume ${runDir} to continue it, or choose another --out folder.`,
      );
    }
    // A new run's folder may hold only the host's lock (runLock.ts) and the temporary files a run
    // killed before writing its run.json leaves (it is started over).
    if ((await listNames(fs, runDir)).some((n) => !isLockFile(n) && !TEMP_FILE.test(n) && !KEPT_FILE.test(n))) {
      throw new EngineError(
        'input/invalid',
        `${runDir} is not empty; choose a new --out folder so nothing in it is overwritten.`,
      );
    }
    own.created = !(await exists(fs, runDir)) || (await lockMadeFolder(fs, runDir));
    await fs.mkdir(runDir);
    await removeStaleTemps(fs, runDir);
  }
  const fresh = !resume || startOver;
  const hooks: WorkHooks = {
    onProgress: (p) => emit({ type: 'train/didProgress', ...p }),
    isCancelled: () => control.isStopped,
    yieldNow: yieldToEvents,
  };
  const data = await loadRunData(fs, spec, fresh ? null : await readTokenizer(fs, runDir), hooks);
  // A stop that came while the data was read (or its last piece encoded) ends the session here: nothing trains.
  await yieldToEvents();
  if (control.isStopped) throw new CancelledError('the data was being prepared');
  const tok = data.tok;
  if (data.kind === 'documents') {
    const limits = spec.data.kind === 'documents' ? spec.data : {};
    if (data.docs.skipped.length)
      log(
        `Skipped ${data.docs.skipped.length} ${data.docs.skipped.length === 1 ? 'file' : 'files'}: ` +
          `${skippedNote(data.docs.skipped, limits)}`,
        'warn',
      );
    for (const note of data.docs.notes) log(note);
    log(`Validation: ${data.docs.validation.text}.`, data.docs.validation.kind === 'none' ? 'warn' : 'info');
  }
  const cfg = fresh ? resolveConfig(spec, tok.vocabSize) : (await readRunJson(fs, runDir)).config;
  const { dataset, dropped } = buildDataset(spec, data, cfg.maxLen);
  if (dropped) log(`Left out ${dropped} pair(s) longer than the context of ${cfg.maxLen} tokens.`, 'warn');
  // Another engine trains on its own device; ours on the GPU where the backend (or auto's probe) says so.
  const device = otherEngine === null ? await openTrainingDevice(spec.backend, platform.gpu) : null;
  if (device?.detail) log(device.detail);
  const gpu = device?.gpu
    ? { backend: createWebGpuBackend(device.gpu.device), adapter: device.gpu.adapter.name }
    : null;
  // Evaluation and snapshots of a WebGPU run read a CPU copy of the model; built first, so a copy too large for
  // WebAssembly's memory refuses before anything is allocated on the GPU or written to the run folder.
  const host = gpu
    ? buildHostCopy(
        cfg,
        dataset,
        backendFor('auto', () => platform.threads(helpers)),
        modelPadId(tok),
      )
    : null;
  const backend = gpu ? gpu.backend : backendFor(spec.backend, () => platform.threads(helpers));
  const choice = device?.choice ?? null;
  // Another engine trains: our model only initializes the weights and draws snapshots of the probe.
  const model = buildModel(
    cfg,
    otherEngine === null ? dataset : { ...dataset, maxBatch: dataset.probe().B },
    backend,
    modelPadId(tok),
    stateOptimizer(spec.training.optimizer),
  );
  const engine = otherEngine ?? (gpu ? `webgpu (${gpu.adapter})` : backend.name);
  // Our CPU kernels' threads; another engine's processes are in its label, the GPU's adapter in its own.
  const threads = otherEngine === null && !gpu ? threadsOf(backend) : undefined;
  const segments = plan ? plan.segments : planSegments(spec);
  const optimizer = buildOptimizer(model, optimizerConfig(spec, cfg, segments));
  // Every GPU buffer is allocated by now but the gradients (at the first backward): one that did not fit refuses here.
  await gpu?.backend.checkAllocations();
  let startStep = 0;
  let run: RunJson;
  if (!fresh) {
    startStep = await loadModelCheckpoint(fs, runDir, model);
    await loadOptimizerCheckpoint(fs, runDir, optimizer, startStep);
    await truncateMetrics(fs, runDir, startStep);
    run = await updateRunJson(fs, runDir, {
      status: 'training',
      step: startStep,
      error: null,
      backendUsed: engine,
      backendChoice: choice ?? undefined,
      threadsUsed: threads,
      ...(plan?.extended ? { spec, segments } : backendChanged ? { spec } : {}),
    });
    log(`Resumed at step ${startStep}.`);
    if (plan?.extended)
      log(
        `Extended to ${spec.training.steps} steps. ` +
          describeSegment(
            segments[segments.length - 1] as RunSegment,
            segments.length - 1,
            plannedWarmup(spec, (segments[0] as RunSegment).toStep),
          ),
      );
  } else {
    model.initialize(stepRng(spec.training.seed, STREAMS.init, 0));
    const now = new Date().toISOString();
    // Started over: the name, note and creation time the run had are kept.
    const kept = resume ? await readRunJson(fs, runDir) : null;
    const { displayName, note } = kept ?? {};
    run = {
      format: RUN_FORMAT,
      version: RUN_VERSION,
      createdAt: kept?.createdAt ?? now,
      updatedAt: now,
      status: 'training',
      spec,
      config: cfg,
      segments,
      step: 0,
      bestValLoss: null,
      data: dataSummary(data, dataset),
      error: null,
      backendUsed: engine,
      ...(choice === null ? {} : { backendChoice: choice }),
      ...(threads === undefined ? {} : { threadsUsed: threads }),
      ...(displayName === undefined ? {} : { displayName }),
      ...(note === undefined ? {} : { note }),
    };
    await writeRunJson(fs, runDir, run);
    own.owned = true;
    await writeTokenizer(fs, runDir, tok);
    if (resume) {
      // Nothing of the attempt that stopped belongs to the new start: no optimizer state, no logged step.
      await fs.remove(fs.join(runDir, RUN_FILES.optimizer));
      await truncateMetrics(fs, runDir, 0);
    }
  }
  // The host wrote the weights (initialized or loaded) and the optimizer's state: the GPU gets them once.
  gpu?.backend.uploadAll();
  const est = estimateModel(
    cfg,
    {
      maxBatch: dataset.maxBatch,
      maxLen: model.maxLen,
      ...(cfg.kind === 'encoder-decoder' ? { maxSrcLen: model.maxSrcLen } : {}),
    },
    stateOptimizer(spec.training.optimizer),
  );
  const info: ModelInfo = {
    config: { ...cfg },
    params: est.params,
    paramsByModule: est.paramsByModule,
    memoryBytes: est.totalBytes,
    flopsPerToken: est.trainFlopsPerToken,
    backend: engine,
    ...(choice === null ? {} : { backendChoice: choice }),
    ...(threads === undefined ? {} : { threads }),
  };
  return {
    model,
    trainer: new Trainer(model, optimizer, stepRng(spec.training.seed, STREAMS.dropout, 0)),
    dataset,
    tok,
    startStep,
    info,
    run,
    fresh,
    gpu: gpu && host ? { backend: gpu.backend, host } : null,
  };
}

/**
 * Rows of a batch the CPU copy of a WebGPU run's model is planned for: the dataset's, or the most below them whose
 * inference fits WebAssembly's memory (at least 1; evaluation splits its batches to them: evaluate.ts
 * validationLoss). nanoGPT's shakespeare-char shape at 64 × 256 needed 4.6 GiB planned as a training model; as an
 * inference model it keeps all 64 rows.
 */
export function hostCopyRows(cfg: ModelConfig, dataset: Dataset, padId?: number): number {
  return mostRowsThatFit(cfg, dataset.maxBatch, (rows) => ({ ...datasetShape(cfg, dataset, padId), maxBatch: rows }));
}

/**
 * The CPU copy of a WebGPU run's model that evaluation and attention snapshots read: an inference model (no
 * gradients, no optimizer state) of {@link hostCopyRows} rows; refused in one line, saying what the copy is for,
 * when not even one row fits.
 */
function buildHostCopy(cfg: ModelConfig, dataset: Dataset, backend: Backend, padId: number): Transformer {
  const shape = { ...datasetShape(cfg, dataset, padId), maxBatch: hostCopyRows(cfg, dataset, padId) };
  try {
    checkMemory(cfg, shape, backend, 'inference', { lower: `lower the sequence length (${shape.maxLen})` });
    return new Transformer(cfg, shape).bind(backend);
  } catch (e) {
    if (!EngineError.is(e)) throw e;
    throw new EngineError(
      e.code,
      `On WebGPU, evaluation and attention snapshots run on a CPU copy of the model: ` +
        `${e.message.charAt(0).toLowerCase()}${e.message.slice(1)}`,
    );
  }
}

/**
 * Reports a failed session: run.json says failed (with the message) when the session owns
 * the folder, a folder it created before there was anything to keep is removed, and the host
 * gets `train/didFail`. A non-finite loss also says which checkpoint is kept. A full disk
 * (a DiskFullError of the lab's writes, or a runner's `disk/full` with its own line) stops
 * the run instead: run.json says stopped, with the reason and the step of the checkpoint
 * kept, so it resumes once there is space. A lost GPU device (`gpu/lost`) stops it the same
 * way, its line saying how to resume on WebAssembly (a new run with no checkpoint yet is
 * removed). A {@link SetupFailure} is reported with what the session owned when it failed.
 */
export async function reportFailure(
  fs: LabFs,
  runDir: string,
  own: Ownership,
  e: unknown,
  step: number,
  emit: Emit,
): Promise<void> {
  if (e instanceof SetupFailure) return reportFailure(fs, runDir, e.own, e.failure, step, emit);
  const error: { readonly code: ErrorCode; readonly message: string } = EngineError.is(e)
    ? e.toData()
    : DiskFullError.is(e)
      ? {
          code: e.code,
          message: diskFullMessage(fs, runDir, e.file, step, own.owned ? await lastCheckpointStep(fs, runDir) : null),
        }
      : e instanceof CancelledError
        ? { code: 'cancelled', message: e.message }
        : isCodedError(e)
          ? { code: e.code, message: e.message }
          : (fileErrorData(e) ?? { code: 'internal', message: `Internal error: ${(e as Error).message ?? String(e)}` });
  const message =
    error.code === 'train/nonFinite'
      ? `${error.message} The last good checkpoint (step ${(await lastCheckpointStep(fs, runDir)) ?? 0}) is kept.`
      : error.code === 'gpu/lost'
        ? gpuLostMessage(error.message, runDir, step, own.owned ? await lastCheckpointStep(fs, runDir) : null)
        : error.message;
  try {
    // Cancelled while reading the data: a resumed run stays as it was; a new one had nothing to keep.
    // A full disk stops the run (status stopped, the reason kept): it resumes once there is space.
    // A full disk before the first checkpoint of a new run leaves nothing to resume from.
    const full = stopsRun(error.code);
    const kept = full ? await lastCheckpointStep(fs, runDir) : null;
    const keep = own.owned && error.code !== 'cancelled' && !(full && own.created && kept === null);
    // A full disk's run.json says the step of the checkpoint kept (the one a resume starts from).
    if (keep)
      await updateRunJson(fs, runDir, {
        status: full ? 'stopped' : 'failed',
        error: { code: error.code, message },
        ...(kept !== null ? { step: kept } : {}),
      });
    else if (own.created) await fs.remove(runDir); // nothing worth keeping yet
  } catch {
    // The run folder is unreadable, or the disk has no room even for run.json (it then still
    // says "training" at its last checkpoint, which the editor shows as interrupted and resumable).
  }
  emit({ type: 'train/didFail', step, error: { code: error.code, message } });
}

/** An error a runner raises with one of its own codes (errorCodes.ts), such as the PyTorch engine's. */
export class RunnerError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RunnerError';
  }
}

function isCodedError(e: unknown): e is RunnerError {
  return e instanceof Error && e.name === 'RunnerError' && typeof (e as RunnerError).code === 'string';
}

/** Threads `backend` runs its kernels on (the WebAssembly backend says; the reference runs on one). */
function threadsOf(backend: Backend): number {
  const t = (backend as { readonly threads?: unknown }).threads;
  return typeof t === 'number' && t >= 1 ? t : 1;
}
