/**
 * The extension host's side of the model worker (dist/modelWorker.js): starts it on the
 * first request, waits for `worker/ready` before posting, validates every message it
 * sends back, routes streamed tokens and progress to the request that asked, cancels an
 * evaluation or import through its shared flag (or, where there is no SharedArrayBuffer — a
 * web page that is not cross-origin isolated — by ending the worker, which the next request
 * starts afresh), and fails every pending request with a clear error if the worker dies.
 *
 * Leaves out: the compute (src/lab/workers/modelWorker.node.ts) and any VS Code UI.
 */

import type { AblationOutputData, HeadRefData, LensInputData, LensOutputData } from '../../protocol/analysis';
import type { TrainSpec } from '../../protocol/data';
import type { BleuTokenize, EvalDecoding } from '../../protocol/evaluation';
import type {
  AttentionMapData,
  AttentionSnapshot,
  AttentionStack,
  DecodeOutput,
  DecodeParams,
} from '../../protocol/model';
import type {
  EvalFilesData,
  EvalFilesOutput,
  ExportOutput,
  HostToModelWorker,
  ImportOutput,
  ModelWorkerToHost,
  ScoreOutput,
} from '../../protocol/modelWorker';
import { ProtocolError } from '../../protocol/schema';
import { validateModelWorkerToHost } from '../../protocol/modelWorker';
import type { HostedWorker, StartWorker } from '../../lab/workers/workerHandle';
import type { DisposableLike } from '../base/disposables';
import { PendingRequests, RequestError } from './pendingRequests';

/**
 * Request timeouts (ms): a big model on a long text is the slowest short request — GPT-2
 * small's logit lens of 1,000 tokens is 13 unembeddings of 50,257 ids, minutes on two busy
 * cores; an evaluation on files shows its progress and can be cancelled, so it gets an hour.
 */
const TIMEOUT_MS = {
  decode: 300_000,
  score: 300_000,
  attend: 300_000,
  lens: 600_000,
  ablate: 600_000,
  export: 300_000,
  calibrate: 60_000,
  evaluate: 3_600_000,
  import: 1_800_000,
} as const;

/** What `calibrate` measured. */
export interface CalibrationResult {
  readonly secondsPerStep: number;
  readonly flopsPerSec: number;
  readonly backend: string;
  /** Threads the measured steps ran on. */
  readonly threads: number;
}

type Request = HostToModelWorker extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** What a request may stream back, and how to stop it. */
interface RequestHooks {
  readonly onToken?: (token: string, logprob: number) => void;
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Aborting fails the request at once with code 'cancelled' and sets `cancelFlag` for the worker (null: ends the
   * worker).
   */
  readonly signal?: AbortSignal;
  readonly cancelFlag?: Int32Array | null;
}

/** Options of {@link ModelClient.evaluateFiles}. */
export interface EvaluateFilesHooks {
  /** `done` of `total` batches and decodes (at most ten calls a second). */
  readonly onProgress?: (done: number, total: number) => void;
  /** Abort to cancel: the request fails with code 'cancelled' and the worker stops at its next batch. */
  readonly signal?: AbortSignal;
}

/**
 * A flag the worker reads while it computes, or null where there is no SharedArrayBuffer (a page that is not
 * cross-origin isolated).
 */
function cancelFlag(): Int32Array | null {
  return typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(4)) : null;
}

/** A lazily started model worker. */
export class ModelClient implements DisposableLike {
  private worker: HostedWorker | null = null;
  private ready: Promise<void> | null = null;
  private notReady: ((e: RequestError) => void) | null = null;
  private readonly pending = new PendingRequests(
    { set: (fn, ms) => setTimeout(fn, ms), clear: (h) => clearTimeout(h as NodeJS.Timeout) },
    (what) => this.restart(what),
  );
  private readonly tokenListeners = new Map<number, (token: string, logprob: number) => void>();
  private readonly progressListeners = new Map<number, (done: number, total: number) => void>();
  private disposed = false;

  constructor(
    private readonly startWorker: StartWorker,
    private readonly log: (message: string) => void,
  ) {}

  /** Decodes with a run's model; `onToken` sees greedy and sampled tokens as they come. */
  decode(
    runDir: string,
    params: DecodeParams,
    onToken?: (token: string, logprob: number) => void,
  ): Promise<DecodeOutput> {
    return this.request<DecodeOutput>(
      'Decoding',
      TIMEOUT_MS.decode,
      { type: 'model/decode', runDir, params },
      onToken ? { onToken } : {},
    );
  }

  /** Per-token log-probabilities of `text` (given `source` for an encoder-decoder). */
  score(runDir: string, source: string | null, text: string): Promise<ScoreOutput> {
    return this.request<ScoreOutput>('Scoring', TIMEOUT_MS.score, { type: 'model/score', runDir, source, text });
  }

  /**
   * The model's attention on `text`: every head's scores, and every layer's map (an overview of one longer than
   * OVERVIEW_SIDE).
   */
  attend(runDir: string, text: string): Promise<AttentionSnapshot> {
    return this.request<AttentionSnapshot>('Computing attention', TIMEOUT_MS.attend, {
      type: 'model/attend',
      runDir,
      text,
    });
  }

  /** One layer's whole map of the attention of `text` (after `attend` gave its overview). */
  attendLayer(runDir: string, text: string, stack: AttentionStack, layer: number): Promise<AttentionMapData> {
    return this.request<AttentionMapData>('Computing attention', TIMEOUT_MS.attend, {
      type: 'model/attendLayer',
      runDir,
      text,
      stack,
      layer,
    });
  }

  /** The logit lens of `input` (top-`topK` per layer and position); `fit` cuts an input longer than the context. */
  lens(runDir: string, input: LensInputData, topK: number, fit: boolean): Promise<LensOutputData> {
    return this.request<LensOutputData>('Computing the logit lens', TIMEOUT_MS.lens, {
      type: 'model/lens',
      runDir,
      input,
      topK,
      fit,
    });
  }

  /** Next-token top-`topK` and loss of `input` with every head on and with the heads of `off` switched off. */
  ablate(
    runDir: string,
    input: LensInputData,
    off: readonly HeadRefData[],
    topK: number,
    fit: boolean,
  ): Promise<AblationOutputData> {
    return this.request<AblationOutputData>('Ablating heads', TIMEOUT_MS.ablate, {
      type: 'model/ablate',
      runDir,
      input,
      off,
      topK,
      fit,
    });
  }

  /**
   * Writes the run's export folder `<outDir>/<run name>` (lab/interop/exportFolder.ts); `force` replaces a non-empty
   * one.
   */
  exportPytorch(runDir: string, outDir: string, force = false): Promise<ExportOutput> {
    return this.request<ExportOutput>('Exporting', TIMEOUT_MS.export, { type: 'model/export', runDir, outDir, force });
  }

  /** Measures seconds per training step of `spec` on this machine. */
  calibrate(spec: TrainSpec, vocabSize: number): Promise<CalibrationResult> {
    return this.request<CalibrationResult>('Measuring speed', TIMEOUT_MS.calibrate, {
      type: 'model/calibrate',
      spec,
      vocabSize,
    });
  }

  /**
   * Evaluates a run on test files it never saw (documents or pairs), with `opts.maxPairs`
   * pairs decoded (greedy unless `opts.decoding` says beam) for exact match, BLEU and chrF;
   * the worker records it in the run's evaluations.jsonl.
   */
  evaluateFiles(
    runDir: string,
    data: EvalFilesData,
    opts: { readonly maxPairs: number; readonly decoding?: EvalDecoding; readonly tokenize?: BleuTokenize | null },
    hooks: EvaluateFilesHooks = {},
  ): Promise<EvalFilesOutput> {
    const cancel = cancelFlag();
    const msg = {
      type: 'model/evaluateFiles',
      runDir,
      data,
      maxPairs: opts.maxPairs,
      decoding: opts.decoding ?? { strategy: 'greedy' },
      tokenize: opts.tokenize ?? null,
      ...(cancel ? { cancel } : {}),
    } as const;
    return this.request<EvalFilesOutput>('Evaluating', TIMEOUT_MS.evaluate, msg, { ...hooks, cancelFlag: cancel });
  }

  /**
   * Imports a PyTorch checkpoint (a .safetensors file or its folder) into the new run folder `outDir`; progress in
   * bytes.
   */
  importCheckpoint(from: string, outDir: string, hooks: EvaluateFilesHooks = {}): Promise<ImportOutput> {
    const cancel = cancelFlag();
    return this.request<ImportOutput>(
      'Importing',
      TIMEOUT_MS.import,
      { type: 'model/import', from, outDir, ...(cancel ? { cancel } : {}) },
      { ...hooks, cancelFlag: cancel },
    );
  }

  /** Draws the snapshots a PyTorch run's trainer left as weights (a run no lab followed); resolves to how many. */
  drawSnapshots(runDir: string): Promise<number> {
    return this.request<number>('Drawing attention snapshots', TIMEOUT_MS.export, {
      type: 'model/drawSnapshots',
      runDir,
    });
  }

  private async request<T>(what: string, timeoutMs: number, req: Request, hooks: RequestHooks = {}): Promise<T> {
    if (this.disposed) throw new RequestError('disposed', `${what} was cancelled: Attention Lab is shutting down.`);
    const cancelled = (): RequestError => new RequestError('cancelled', `${what} was cancelled.`);
    if (hooks.signal?.aborted) throw cancelled();
    const worker = this.start();
    await this.ready;
    if (this.disposed || this.worker !== worker)
      throw new RequestError('disposed', `${what} was cancelled: the model worker stopped.`);
    if (hooks.signal?.aborted) throw cancelled();
    let sent: number | null = null;
    const onAbort = (): void => {
      if (hooks.cancelFlag) Atomics.store(hooks.cancelFlag, 0, 1); // the worker stops at its next check
      if (sent === null) return;
      this.forget(sent);
      this.pending.reject(sent, 'cancelled', `${what} was cancelled.`);
      if (hooks.cancelFlag === null) this.restart(what, 'was cancelled'); // no flag to set: stop the work by ending the worker
    };
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.pending.start<T>(what, timeoutMs, (id) => {
        if (hooks.onToken) this.tokenListeners.set(id, hooks.onToken);
        if (hooks.onProgress) this.progressListeners.set(id, hooks.onProgress);
        sent = id;
        worker.post({ ...req, id } as HostToModelWorker);
      });
    } finally {
      hooks.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Drops what streams back to request `id`. */
  private forget(id: number): void {
    this.tokenListeners.delete(id);
    this.progressListeners.delete(id);
  }

  /** A timed-out or cancelled request may still be computing: drop that worker so the next request gets a fresh one. */
  private restart(what: string, why = 'timed out'): void {
    const w = this.worker;
    if (!w) return;
    this.log(`${what} ${why}; restarting the model worker.`);
    this.lost(w, `The model worker was restarted after ${what.toLowerCase()} ${why}.`);
    void w.terminate();
  }

  private start(): HostedWorker {
    if (this.worker) return this.worker;
    const worker = this.startWorker();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      this.notReady = reject;
      worker.onMessage((raw: unknown) => {
        let msg: ModelWorkerToHost;
        try {
          msg = validateModelWorkerToHost(raw);
        } catch (e) {
          this.log(
            `Ignored an invalid message from the model worker: ${e instanceof ProtocolError ? e.message : String(e)}`,
          );
          return;
        }
        if (msg.type === 'worker/ready') resolve();
        else this.route(msg);
      });
    });
    this.ready.catch(() => undefined); // a worker lost before anyone waits on it is not an unhandled rejection
    worker.onLost((message) => this.lost(worker, message));
    return worker;
  }

  private route(msg: Exclude<ModelWorkerToHost, { type: 'worker/ready' }>): void {
    switch (msg.type) {
      case 'model/didToken':
        this.tokenListeners.get(msg.id)?.(msg.token, msg.logprob);
        return;
      case 'model/didDecode':
        this.finish(msg.id, msg.output);
        return;
      case 'model/didScore':
        this.finish(msg.id, msg.output);
        return;
      case 'model/didAttend':
        this.finish(msg.id, msg.snapshot);
        return;
      case 'model/didAttendLayer':
        this.finish(msg.id, msg.map);
        return;
      case 'model/didExport':
        this.finish(msg.id, msg.output);
        return;
      case 'model/didCalibrate':
        this.finish(msg.id, {
          secondsPerStep: msg.secondsPerStep,
          flopsPerSec: msg.flopsPerSec,
          backend: msg.backend,
          threads: msg.threads,
        });
        return;
      case 'model/didProgress':
        this.progressListeners.get(msg.id)?.(msg.done, msg.total);
        return;
      case 'model/didEvaluateFiles':
        this.finish(msg.id, msg.output);
        return;
      case 'model/didLens':
        this.finish(msg.id, msg.output);
        return;
      case 'model/didAblate':
      case 'model/didImport':
        this.finish(msg.id, msg.output);
        return;
      case 'model/didDrawSnapshots':
        this.finish(msg.id, msg.drawn);
        return;
      case 'model/didFail':
        this.forget(msg.id);
        this.pending.reject(msg.id, msg.error.code, msg.error.message);
        return;
      default:
        msg satisfies never;
    }
  }

  private finish(id: number, value: unknown): void {
    this.forget(id);
    if (!this.pending.resolve(id, value))
      this.log(`The model worker answered request ${id}, which was no longer waiting (timed out or cancelled).`);
  }

  private lost(worker: HostedWorker, message: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = null;
    this.notReady?.(
      new RequestError(
        this.disposed ? 'disposed' : 'internal',
        this.disposed ? 'Cancelled: Attention Lab is shutting down.' : message,
      ),
    );
    this.notReady = null;
    this.tokenListeners.clear();
    this.progressListeners.clear();
    if (!this.disposed) this.log(message);
    this.pending.rejectAll('internal', this.disposed ? 'Cancelled: Attention Lab is shutting down.' : message);
  }

  /** Terminates the worker and fails what is in flight (idempotent). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const w = this.worker;
    if (w) this.lost(w, 'Cancelled: Attention Lab is shutting down.');
    this.pending.rejectAll('disposed', 'Cancelled: Attention Lab is shutting down.');
    if (w) void w.terminate();
  }
}
