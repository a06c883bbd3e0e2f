/**
 * The one training run the extension hosts at a time: starts it in the training worker
 * (dist/worker.js, never on the extension host's thread), keeps a snapshot of where it
 * stands (step, loss, tokens/s, paused), republishes every validated worker notification
 * for the status bar, progress notification, runs tree and dashboard, and pauses, resumes
 * and stops it. It holds the run folder's lock (lab/runs/runLock.ts) while the run trains, so a
 * run another window or the command line trains is refused in one line before anything
 * changes here. No VS Code import, so it is unit-tested with the real worker.
 *
 * Leaves out: what the notifications look like (statusBar.ts, trainCommand.ts, the
 * dashboard) and where run folders live (runs/runStore.ts).
 */

import type { LabFs } from '../../lab/files/labFs';
import type { LockIdentity, RunLock } from '../../lab/runs/runLock';
import { takeRunLock, uncheckedIdentity } from '../../lab/runs/runLock';
import type { StartWorker } from '../../lab/workers/workerHandle';
import type { RunOutcome } from '../../lab/workers/trainingClient';
import { TrainingWorker } from '../../lab/workers/trainingClient';
import type { PytorchOptions, TrainSpec } from '../../protocol/data';
import type { FromTrainingWorker } from '../../protocol/trainingWorker';
import type { DisposableLike } from '../base/disposables';
import { Emitter } from '../base/emitter';
import type { Event } from '../base/emitter';

/** Where the active run stands. */
export interface TrainingState {
  readonly runId: string;
  readonly runDir: string;
  readonly name: string;
  readonly step: number;
  readonly startStep: number;
  readonly totalSteps: number;
  readonly loss: number | null;
  readonly tokensPerSec: number;
  readonly bestValLoss: number | null;
  readonly paused: boolean;
  readonly stopping: boolean;
  /** The kernel backend the worker runs on (known from its train/didStart; null before). */
  readonly backend: string | null;
  /** Threads its kernels run on (known from train/didStart; null before). */
  readonly threads: number | null;
}

/** A worker notification of one run. */
export interface RunEvent {
  readonly runId: string;
  readonly event: FromTrainingWorker;
}

/** How a run ended, with its last state. */
export interface RunEnd {
  readonly state: TrainingState;
  readonly outcome: RunOutcome;
}

/** Lines for the log channel. */
export interface TrainingLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Starts, watches, pauses and stops training runs, one at a time. */
export class TrainingController implements DisposableLike {
  private worker: TrainingWorker | null = null;
  private current: TrainingState | null = null;
  private readonly events = new Emitter<RunEvent>((e) => this.log.error(`A listener failed: ${String(e)}`));
  private readonly changes = new Emitter<TrainingState | null>((e) =>
    this.log.error(`A listener failed: ${String(e)}`),
  );
  private readonly ends = new Emitter<RunEnd>((e) => this.log.error(`A listener failed: ${String(e)}`));
  private disposed = false;
  /** The run of a start waiting for its lock, or null (a second start is refused meanwhile). */
  private starting: string | null = null;

  /** Every validated notification of the active run. */
  readonly onEvent: Event<RunEvent> = this.events.event;
  /** The state after any change (null when nothing trains). */
  readonly onDidChange: Event<TrainingState | null> = this.changes.event;
  /** A run ended (before `onDidChange` reports null). */
  readonly onDidEnd: Event<RunEnd> = this.ends.event;

  constructor(
    private readonly startWorker: StartWorker,
    /** The host's file system: its path spelling (run ids are its `resolve`d paths) and the run folders' locks. */
    private readonly fs: LabFs,
    private readonly log: TrainingLog,
    /** Who holds the locks this controller takes (the host's: extensionHost.ts `lockIdentity`). */
    private readonly identity: LockIdentity = uncheckedIdentity('VS Code'),
  ) {}

  /** The active run, or null. */
  get state(): TrainingState | null {
    return this.current;
  }

  /**
   * Starts (or resumes) the run in `runDir`; resolves when it ends, however it ends. With
   * `resume`, `extendTo` trains a finished or stopped run on to that total (a new schedule
   * segment); `pytorch` trains it with the PyTorch engine (the worker then follows a child
   * process). Throws when a run is already training here, and RunLockedError (naming the
   * session) when another session trains `runDir`; nothing changes here then.
   */
  async start(
    runDir: string,
    spec: TrainSpec,
    resume: boolean,
    extendTo: number | null = null,
    pytorch: PytorchOptions | null = null,
  ): Promise<RunOutcome> {
    if (this.disposed) throw new Error('Attention Lab is shutting down; training was not started.');
    if (this.current) throw new Error(`${this.current.name} is still training; stop it before starting another run.`);
    if (this.starting !== null)
      throw new Error(`${this.starting} is still training; stop it before starting another run.`);
    const runId = this.fs.resolve(runDir);
    let lock: RunLock;
    this.starting = this.fs.basename(runId);
    try {
      lock = await takeRunLock(this.fs, runId, this.identity);
    } finally {
      this.starting = null;
    }
    if (lock.tookOver) this.log.warn(lock.tookOver);
    if (this.disposed) {
      await this.release(lock);
      throw new Error('Attention Lab is shutting down; training was not started.');
    }
    const worker = new TrainingWorker(this.startWorker(), lock);
    this.worker = worker;
    const name = this.fs.basename(runId);
    this.current = {
      runId,
      runDir: runId,
      name,
      step: 0,
      startStep: 0,
      totalSteps: extendTo ?? spec.training.steps,
      loss: null,
      tokensPerSec: 0,
      bestValLoss: null,
      paused: false,
      stopping: false,
      backend: null,
      threads: null,
    };
    this.changes.fire(this.current);
    worker.onMessage((event) => this.onMessage(runId, event));
    this.log.info(
      (extendTo !== null
        ? `Extending ${this.current.name} to ${extendTo} steps`
        : `${resume ? 'Resuming' : 'Starting'} ${this.current.name}`) + ` in ${runId}`,
    );
    let outcome: RunOutcome = {
      kind: 'failed',
      step: 0,
      error: { code: 'internal', message: 'The training worker did not start.' },
    };
    try {
      await worker.start(runId, spec, resume, null, extendTo, pytorch);
      outcome = await worker.outcome;
    } finally {
      await worker.dispose();
      await this.release(lock);
      if (this.worker === worker) {
        const last = this.current;
        this.worker = null;
        this.current = null;
        if (last) this.ends.fire({ state: last, outcome });
        this.changes.fire(null);
      }
    }
    if (outcome.kind === 'failed' && outcome.error.code === 'cancelled')
      this.log.info(`${name}: cancelled before training started (${outcome.error.message}).`);
    else if (outcome.kind === 'failed')
      this.log.error(`${name} failed at step ${outcome.step}: ${outcome.error.message}`);
    else this.log.info(`${name} ${outcome.reason === 'completed' ? 'finished' : 'stopped'} at step ${outcome.step}.`);
    return outcome;
  }

  /** Removes a run's lock; one that cannot be removed is logged (another session takes it over once it is stale). */
  private async release(lock: RunLock): Promise<void> {
    try {
      await lock.release();
    } catch (e) {
      this.log.warn(
        `Could not remove the lock of ${this.fs.basename(lock.runDir)}: ${(e as Error)?.message ?? String(e)}`,
      );
    }
  }

  private onMessage(runId: string, event: FromTrainingWorker): void {
    const s = this.current;
    if (!s || s.runId !== runId) return;
    switch (event.type) {
      case 'train/didStart':
        this.update({
          step: event.startStep,
          startStep: event.startStep,
          totalSteps: event.totalSteps,
          backend: event.model.backend,
          threads: event.model.threads ?? 1,
        });
        break;
      case 'train/didStep':
        this.update({ step: event.step, loss: event.loss, tokensPerSec: event.tokensPerSec });
        break;
      case 'train/didEval':
        if (s.bestValLoss === null || event.loss < s.bestValLoss) this.update({ bestValLoss: event.loss });
        break;
      case 'train/didPause':
        this.update({ paused: true });
        break;
      case 'train/didResume':
        this.update({ paused: false });
        break;
      case 'train/didLog':
        if (event.level === 'warn') this.log.warn(event.message);
        else this.log.info(event.message);
        break;
      default:
        break;
    }
    this.events.fire({ runId, event });
  }

  private update(patch: Partial<TrainingState>): void {
    if (!this.current) return;
    this.current = { ...this.current, ...patch };
    this.changes.fire(this.current);
  }

  /** Asks the active run to stop after its current step (a checkpoint is saved). */
  stop(): boolean {
    if (!this.worker || !this.current) return false;
    this.update({ stopping: true });
    void this.worker.stop();
    return true;
  }

  /** Pauses a running run or resumes a paused one; returns the new paused state, or null when nothing trains. */
  togglePause(): boolean | null {
    if (!this.worker || !this.current) return null;
    if (this.current.paused) void this.worker.resume();
    else void this.worker.pause();
    return !this.current.paused;
  }

  /** Pauses (true) or resumes (false) the active run. */
  setPaused(paused: boolean): void {
    if (!this.worker || !this.current || this.current.paused === paused) return;
    void (paused ? this.worker.pause() : this.worker.resume());
  }

  /** Stops training and terminates the worker (idempotent). The run keeps its last checkpoint. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const w = this.worker;
    this.worker = null;
    if (w) {
      void w.stop();
      void w.dispose();
    }
    this.current = null;
    this.events.dispose();
    this.changes.dispose();
    this.ends.dispose();
  }
}
