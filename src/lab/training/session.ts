/**
 * The training loop of one run, as the worker runs it: prepare (or reopen) the run folder,
 * then step — logging metrics, evaluating, snapshotting attention, checkpointing — until
 * the step budget is spent or the host says stop. It emits protocol notifications; it
 * never touches a thread or a terminal, so the CLI, the extension and the tests host the
 * same code. Pause, resume and stop arrive through {@link SessionControl} between steps.
 */

import type { Backend } from '../../engine/backend';
import { EngineError } from '../../engine/errors';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { Trainer } from '../../engine/train';
import { estimateModel } from '../../engine/models/estimate';
import type { RunSegment, TrainSpec } from '../../protocol/data';
import type { ModelInfo } from '../../protocol/model';
import type { WorkerToHost } from '../../protocol/trainingWorker';
import { exists, listNames, removeStaleTemps } from '../files/labFs';
import { DiskFullError } from '../files/fullDisk';
import type { LabPlatform } from '../workers/platform';
import { yieldToEvents } from '../workers/yieldToEvents';
import { loadModelCheckpoint, loadOptimizerCheckpoint, saveCheckpoint } from '../runs/checkpoint';
import { diskFullMessage, lastCheckpointStep } from './stopReasons';
import type { Dataset } from '../data/dataset';
import { STREAMS, stepRng } from '../data/dataset';
import { ByteCounter } from '../evaluation/bitsPerByte';
import { evaluate } from '../evaluation/evaluate';
import { skippedNote } from '../data/corpus';
import type { ErrorCode } from '../workers/errorCodes';
import type { WorkHooks } from '../data/documentData';
import { CancelledError } from '../data/documentData';
import {
  backendFor, buildDataset, buildModel, buildOptimizer, dataSummary, loadRunData, modelPadId, optimizerConfig, readTokenizer,
  resolveConfig, writeTokenizer,
} from './prepare';
import type { RunJson } from '../runs/runFolder';
import { RUN_FILES, RUN_FORMAT, RUN_VERSION, appendMetrics, readRunJson, truncateMetrics, updateRunJson, writeRunJson } from '../runs/runFolder';
import type { ResumePlan } from '../runs/segments';
import { describeSegment, planResume, planSegments, plannedWarmup } from '../runs/segments';
import { saveSnapshot, takeSnapshot } from './snapshots';

/** Commands that reach a running session between steps. */
export class SessionControl {
  private paused = false;
  private stopped = false;
  private wake: (() => void) | null = null;

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get isPaused(): boolean {
    return this.paused && !this.stopped;
  }

  /** Resolves when resumed or stopped. */
  waitWhilePaused(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        resolve();
      };
      if (!this.isPaused) this.wake();
    });
  }
}

/** How a session runs beyond its spec. */
export interface SessionOptions {
  /**
   * Score every head at each snapshot (default true). Only the benchmark turns this off, to
   * measure what the scores cost (`attention-lab bench`): every run a user starts has them.
   */
  readonly headScores?: boolean;
  /** Helper threads of the WebAssembly backend (default: as many as the platform offers). */
  readonly helpers?: number;
}

/** Sends one notification; `transfer` lists buffers that may be moved instead of copied. */
export type Emit = (msg: WorkerToHost, transfer?: ArrayBuffer[]) => void;

interface Prepared {
  model: Transformer;
  trainer: Trainer;
  dataset: Dataset;
  tok: Tokenizer;
  startStep: number;
  info: ModelInfo;
  run: RunJson;
}

/** Whether this session owns the run folder (created it, or resumed it), so may mark it failed. */
interface Ownership {
  created: boolean;
  owned: boolean;
}

async function prepare(platform: LabPlatform, runDir: string, spec: TrainSpec, resume: boolean, control: SessionControl, emit: Emit, own: Ownership, stopAt: number | null, extendTo: number | null, helpers: number | undefined): Promise<Prepared> {
  const { fs } = platform;
  const log = (message: string, level: 'info' | 'warn' = 'info'): void => emit({ type: 'train/didLog', level, message });
  let plan: ResumePlan | null = null;
  if (resume) {
    // Checked before taking the folder over, so a refused resume leaves the run as it was.
    plan = planResume(await readRunJson(fs, runDir), fs.basename(runDir), extendTo, stopAt);
    spec = plan.spec;
    own.owned = true;
    await removeStaleTemps(fs, runDir);
    await removeStaleTemps(fs, fs.join(runDir, RUN_FILES.snapshots));
  } else {
    if (extendTo !== null) throw new EngineError('input/invalid', 'Only a resumed run can be extended to more steps; pass --resume DIR with --steps.');
    if (await exists(fs, fs.join(runDir, RUN_FILES.run))) {
      throw new EngineError('input/invalid', `${runDir} already holds a run; pass --resume ${runDir} to continue it, or choose another --out folder.`);
    }
    if ((await listNames(fs, runDir)).length > 0) {
      throw new EngineError('input/invalid', `${runDir} is not empty; choose a new --out folder so nothing in it is overwritten.`);
    }
    own.created = !(await exists(fs, runDir));
    await fs.mkdir(runDir);
  }
  const hooks: WorkHooks = {
    onProgress: (p) => emit({ type: 'train/didProgress', ...p }),
    isCancelled: () => control.isStopped,
    yieldNow: yieldToEvents,
  };
  const data = await loadRunData(fs, spec, resume ? await readTokenizer(fs, runDir) : null, hooks);
  // A stop that came while the data was read (or its last piece encoded) ends the session here: nothing trains.
  await yieldToEvents();
  if (control.isStopped) throw new CancelledError('the data was being prepared');
  const tok = data.tok;
  if (data.kind === 'documents') {
    const limits = spec.data.kind === 'documents' ? spec.data : {};
    if (data.docs.skipped.length) log(`Skipped ${data.docs.skipped.length} ${data.docs.skipped.length === 1 ? 'file' : 'files'}: ${skippedNote(data.docs.skipped, limits)}`, 'warn');
    for (const note of data.docs.notes) log(note);
    log(`Validation: ${data.docs.validation.text}.`, data.docs.validation.kind === 'none' ? 'warn' : 'info');
  }
  const cfg = resume ? (await readRunJson(fs, runDir)).config : resolveConfig(spec, tok.vocabSize);
  const { dataset, dropped } = buildDataset(spec, data, cfg.maxLen);
  if (dropped) log(`Left out ${dropped} pair(s) longer than the context of ${cfg.maxLen} tokens.`, 'warn');
  const backend = backendFor(spec.backend, () => platform.threads(helpers));
  const model = buildModel(cfg, dataset, backend, modelPadId(tok));
  const segments = plan ? plan.segments : planSegments(spec);
  const optimizer = buildOptimizer(model, optimizerConfig(spec, cfg, segments));
  let startStep = 0;
  let run: RunJson;
  if (resume) {
    startStep = await loadModelCheckpoint(fs, runDir, model);
    await loadOptimizerCheckpoint(fs, runDir, optimizer, startStep);
    await truncateMetrics(fs, runDir, startStep);
    run = await updateRunJson(fs, runDir, { status: 'training', step: startStep, error: null, backendUsed: backend.name, threadsUsed: threadsOf(backend), ...(plan?.extended ? { spec, segments } : {}) });
    log(`Resumed at step ${startStep}.`);
    if (plan?.extended) log(`Extended to ${spec.training.steps} steps. ${describeSegment(segments[segments.length - 1] as RunSegment, segments.length - 1, plannedWarmup(spec, (segments[0] as RunSegment).toStep))}`);
  } else {
    model.initialize(stepRng(spec.training.seed, STREAMS.init, 0));
    await writeTokenizer(fs, runDir, tok);
    const now = new Date().toISOString();
    run = { format: RUN_FORMAT, version: RUN_VERSION, createdAt: now, updatedAt: now, status: 'training', spec, config: cfg, segments, step: 0, bestValLoss: null, data: dataSummary(data, dataset), error: null, backendUsed: backend.name, threadsUsed: threadsOf(backend) };
    await writeRunJson(fs, runDir, run);
    own.owned = true;
  }
  const est = estimateModel(cfg, { maxBatch: dataset.maxBatch, maxLen: model.maxLen, ...(cfg.kind === 'encoder-decoder' ? { maxSrcLen: model.maxSrcLen } : {}) });
  const info: ModelInfo = {
    config: { ...cfg },
    params: est.params,
    paramsByModule: est.paramsByModule,
    memoryBytes: est.totalBytes,
    flopsPerToken: est.trainFlopsPerToken,
    backend: backend.name,
    threads: threadsOf(backend),
  };
  return { model, trainer: new Trainer(model, optimizer, stepRng(spec.training.seed, STREAMS.dropout, 0)), dataset, tok, startStep, info, run };
}


/** Threads `backend` runs its kernels on (the WebAssembly backend says; the reference runs on one). */
function threadsOf(backend: Backend): number {
  const t = (backend as { readonly threads?: unknown }).threads;
  return typeof t === 'number' && t >= 1 ? t : 1;
}

/**
 * Runs (or resumes) the run in `runDir` (on `platform`'s file system and threads) to `spec.training.steps` (or `stopAt`, whichever
 * comes first; a run stopped early resumes exactly where it stopped). With `resume`,
 * `extendTo` trains a finished or stopped run on to that total as a new schedule segment
 * (segments.ts). Never throws: failures are reported as `train/didFail` (the last checkpoint
 * stays loadable; a refused resume leaves the run folder as it was).
 */
export async function runSession(
  platform: LabPlatform, runDir: string, spec: TrainSpec, resume: boolean, control: SessionControl, emit: Emit, stopAt: number | null = null, extendTo: number | null = null,
  options: SessionOptions = {},
): Promise<void> {
  let step = 0;
  let prepared: Prepared | null = null;
  const own: Ownership = { created: false, owned: false };
  const { fs } = platform;
  try {
    prepared = await prepare(platform, runDir, spec, resume, control, emit, own, stopAt, extendTo, options.helpers);
    const { model, trainer, dataset, tok, info } = prepared;
    spec = prepared.run.spec;
    const t = spec.training;
    step = prepared.startStep;
    const segments = prepared.run.segments;
    emit({ type: 'train/didStart', runDir, startStep: step, totalSteps: t.steps, segments, model: info, data: prepared.run.data });
    // Each segment's last step evaluates (the run's last step among them).
    const segmentEnds = new Set(segments.map((s) => s.toStep));
    let bestVal = prepared.run.bestValLoss;
    const byteCounter = new ByteCounter(tok, model.padId);
    const snapshot = async (): Promise<void> => {
      const snap = takeSnapshot(model, dataset, tok, step, t.seed, options.headScores ?? true);
      await saveSnapshot(fs, runDir, snap);
      emit({ type: 'train/didSnapshot', ...snap }, [...snap.maps.map((m) => m.data.buffer as ArrayBuffer), ...snap.masks.map((m) => m.data.buffer as ArrayBuffer)]);
    };
    const checkpoint = async (): Promise<void> => {
      const file = await saveCheckpoint(fs, runDir, model, trainer.optimizer, step);
      await updateRunJson(fs, runDir, { step, bestValLoss: bestVal });
      emit({ type: 'train/didSaveCheckpoint', step, path: file });
    };
    if (t.snapshotEvery > 0 && step === 0) await snapshot();
    const t0 = Date.now();
    let tokensSince = 0;
    let since = Date.now();
    let reason: 'completed' | 'stopped' = 'completed';
    const last = stopAt === null ? t.steps : Math.min(stopAt, t.steps);
    if (last < t.steps) reason = 'stopped';
    while (step < last) {
      await yieldToEvents();
      if (control.isPaused) {
        emit({ type: 'train/didPause', step });
        await updateRunJson(fs, runDir, { status: 'paused' });
        await control.waitWhilePaused();
        if (!control.isStopped) {
          await updateRunJson(fs, runDir, { status: 'training' });
          emit({ type: 'train/didResume', step });
        }
        since = Date.now();
        tokensSince = 0;
      }
      if (control.isStopped) {
        reason = 'stopped';
        break;
      }
      const next = step + 1;
      const batch = dataset.trainBatch(next);
      const r = trainer.step(batch, stepRng(t.seed, STREAMS.dropout, next));
      step = next;
      tokensSince += r.tokens;
      const now = Date.now();
      const bytes = byteCounter.bytes(batch.targets, batch.B * batch.T);
      const metrics = { step, loss: r.loss, lr: r.lr, gradNorm: r.gradNorm, tokens: r.tokens, tokensPerSec: tokensSince / Math.max(1e-3, (now - since) / 1000), elapsedMs: now - t0, bytes };
      await appendMetrics(fs, runDir, { type: 'step', ...metrics });
      emit({ type: 'train/didStep', ...metrics });
      if (now - since > 2000) {
        since = now;
        tokensSince = 0;
      }
      if ((t.evalEvery > 0 && step % t.evalEvery === 0) || segmentEnds.has(step)) {
        const ev = evaluate(model, dataset, tok, { maxPairs: 100 });
        if (bestVal === null || ev.loss < bestVal) bestVal = ev.loss;
        const e = { step, ...ev };
        await appendMetrics(fs, runDir, { type: 'eval', ...e });
        emit({ type: 'train/didEval', ...e });
      }
      if (t.snapshotEvery > 0 && step % t.snapshotEvery === 0) await snapshot();
      if (t.checkpointEvery > 0 && step % t.checkpointEvery === 0 && step !== t.steps) await checkpoint();
    }
    await checkpoint();
    await updateRunJson(fs, runDir, { status: reason, step, bestValLoss: bestVal });
    emit({ type: 'train/didFinish', step, reason });
  } catch (e) {
    const error: { readonly code: ErrorCode; readonly message: string } = EngineError.is(e)
      ? e.toData()
      : DiskFullError.is(e)
        ? { code: e.code, message: diskFullMessage(fs, runDir, e.file, step, own.owned ? await lastCheckpointStep(fs, runDir) : null) }
        : e instanceof CancelledError
          ? { code: 'cancelled', message: e.message }
          : { code: 'internal', message: `Internal error: ${(e as Error).message ?? String(e)}` };
    const message = error.code === 'train/nonFinite' ? `${error.message} The last good checkpoint (step ${(await lastCheckpointStep(fs, runDir)) ?? 0}) is kept.` : error.message;
    try {
      // Cancelled while reading the data: a resumed run stays as it was; a new one had nothing to keep.
      // A full disk stops the run (status stopped, the reason kept): it resumes once there is space.
      // A full disk before the first checkpoint of a new run leaves nothing to resume from.
      const full = error.code === 'disk/full';
      const kept = full ? await lastCheckpointStep(fs, runDir) : null;
      const keep = own.owned && error.code !== 'cancelled' && !(full && own.created && kept === null);
      // A full disk's run.json says the step of the checkpoint kept (the one a resume starts from).
      if (keep) await updateRunJson(fs, runDir, { status: full ? 'stopped' : 'failed', error: { code: error.code, message }, ...(kept !== null ? { step: kept } : {}) });
      else if (own.created) await fs.remove(runDir); // nothing worth keeping yet
    } catch {
      // The run folder is unreadable, or the disk has no room even for run.json (it then still
      // says "training" at its last checkpoint, which the editor shows as interrupted and resumable).
    }
    emit({ type: 'train/didFail', step, error: { code: error.code, message } });
  }
}
