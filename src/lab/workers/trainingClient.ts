/**
 * The training worker's client, for the CLI and the extension alike: start it, wait until
 * it says ready before sending anything, validate every notification on arrival, and
 * settle one promise when the run finishes, fails, or the worker dies — or when the run
 * folder's lock (runs/runLock.ts), which the caller holds, is taken over by another writer.
 * `dispose` terminates the worker; it is idempotent.
 */

import type { ErrorData, PytorchOptions, TrainSpec } from '../../protocol/data';
import type { ToTrainingWorker, FromTrainingWorker } from '../../protocol/trainingWorker';
import { ProtocolError } from '../../protocol/schema';
import { validateFromTrainingWorker } from '../../protocol/trainingWorker';
import type { RunLock } from '../runs/runLock';
import type { HostedWorker } from './workerHandle';

/** How a run ended. */
export type RunOutcome =
  | { readonly kind: 'finished'; readonly step: number; readonly reason: 'completed' | 'stopped' }
  | { readonly kind: 'failed'; readonly step: number; readonly error: ErrorData };

/** A training run in its own worker (a Node thread, or a Web Worker). */
export class TrainingWorker {
  private readonly listeners: ((msg: FromTrainingWorker) => void)[] = [];
  private readonly ready: Promise<void>;
  private disposed = false;
  private lastStep = 0;
  /** Settles when the run ends, however it ends. */
  readonly outcome: Promise<RunOutcome>;

  /**
   * `lock`: the run folder's lock the caller holds; should another writer take it over, the
   * worker is terminated at once — without a last checkpoint into a folder it no longer owns —
   * and the run fails with the lock's line (code `run/locked`).
   */
  constructor(
    private readonly worker: HostedWorker,
    lock: RunLock | null = null,
  ) {
    let markReady!: () => void;
    this.ready = new Promise((resolve) => (markReady = resolve));
    let settle!: (o: RunOutcome) => void;
    this.outcome = new Promise((resolve) => (settle = resolve));
    this.worker.onMessage((raw: unknown) => {
      let msg: FromTrainingWorker;
      try {
        msg = validateFromTrainingWorker(raw);
      } catch (e) {
        const message = e instanceof ProtocolError ? e.message : String(e);
        settle({
          kind: 'failed',
          step: this.lastStep,
          error: { code: 'protocol', message: `The training worker sent an invalid message (${message}).` },
        });
        return;
      }
      if (msg.type === 'worker/ready') markReady();
      if (msg.type === 'train/didStep') this.lastStep = msg.step;
      for (const l of this.listeners) l(msg);
      if (msg.type === 'train/didFinish') settle({ kind: 'finished', step: msg.step, reason: msg.reason });
      if (msg.type === 'train/didFail') settle({ kind: 'failed', step: msg.step, error: msg.error });
    });
    this.worker.onLost((message) => {
      if (!this.disposed) settle({ kind: 'failed', step: this.lastStep, error: { code: 'internal', message } });
    });
    lock?.onLost((message) => {
      settle({ kind: 'failed', step: this.lastStep, error: { code: 'run/locked', message } });
      void this.dispose();
    });
  }

  /** Adds a listener for every (validated) notification. */
  onMessage(listener: (msg: FromTrainingWorker) => void): void {
    this.listeners.push(listener);
  }

  private async send(msg: ToTrainingWorker): Promise<void> {
    await this.ready;
    if (!this.disposed) this.worker.post(msg);
  }

  /**
   * Starts (or resumes) the run; `extendTo` trains a resumed run on to a new total (a new
   * segment); `pytorch` trains it with the PyTorch engine instead of ours (on Node only);
   * `helpers` sets the WebAssembly helper threads (default: as many as the platform offers).
   */
  start(
    runDir: string,
    spec: TrainSpec,
    resume: boolean,
    stopAt: number | null = null,
    extendTo: number | null = null,
    pytorch: PytorchOptions | null = null,
    helpers?: number,
  ): Promise<void> {
    return this.send({
      type: 'train/start',
      runDir,
      spec,
      resume,
      stopAt,
      extendTo,
      pytorch,
      ...(helpers === undefined ? {} : { helpers }),
    });
  }

  pause(): Promise<void> {
    return this.send({ type: 'train/pause' });
  }

  resume(): Promise<void> {
    return this.send({ type: 'train/resume' });
  }

  stop(): Promise<void> {
    return this.send({ type: 'train/stop' });
  }

  /** Terminates the worker (idempotent). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.worker.terminate();
  }
}
