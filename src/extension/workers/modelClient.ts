/**
 * The extension host's side of the model worker (dist/modelWorker.js): `request(kind, params)`
 * sends one of the requests declared in protocol/modelWorker.ts (`modelRequests`) and resolves
 * to that kind's answer, failing after that entry's time-out. It starts the worker on the
 * first request, waits for `worker/ready` before posting, validates every message it
 * sends back (an answer of another kind than asked fails the request), routes streamed tokens
 * and progress to the request that asked, cancels an
 * evaluation or import through its shared flag (or, where there is no SharedArrayBuffer — a
 * web page that is not cross-origin isolated — by ending the worker, which the next request
 * starts afresh), and fails every pending request with a clear error if the worker dies.
 *
 * Leaves out: the compute (src/lab/workers/modelWorker.node.ts) and any VS Code UI.
 */

import type { ModelAnswer, ModelParams, ModelRequestKind, FromModelWorker } from '../../protocol/modelWorker';
import { ProtocolError } from '../../protocol/schema';
import { modelRequests, validateFromModelWorker } from '../../protocol/modelWorker';
import type { HostedWorker, StartWorker } from '../../lab/workers/workerHandle';
import type { DisposableLike } from '../base/disposables';
import { PendingRequests, RequestError } from './pendingRequests';

/** What a request streams back (as its declaration's `streams` says), and how to stop it. */
export interface RequestHooks {
  /** Each decoded token (a request declared with `streams: 'token'`; others never call it). */
  readonly onToken?: (token: string, logprob: number) => void;
  /** `done` of `total` (a request declared with `streams: 'progress'`; at most ten calls a second). */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Abort to cancel: the request fails at once with code 'cancelled'; a request with a `cancel` field gets a shared
   * flag the worker reads between batches (where there is none, the worker is ended).
   */
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
  /** The kind of each request in flight, so an answer of another kind is refused. */
  private readonly kinds = new Map<number, ModelRequestKind>();
  private disposed = false;

  constructor(
    private readonly startWorker: StartWorker,
    private readonly log: (message: string) => void,
  ) {}

  /**
   * Asks the model worker for request `kind` (declared in protocol/modelWorker.ts `modelRequests`: its fields,
   * answer and time-out); resolves to its answer, or fails with a RequestError ('timeout', 'cancelled', the worker's
   * code).
   */
  async request<K extends ModelRequestKind>(
    kind: K,
    params: ModelParams<K>,
    hooks: RequestHooks = {},
  ): Promise<ModelAnswer<K>> {
    const { what, timeoutMs, streams } = modelRequests.table[kind];
    if (this.disposed) throw new RequestError('disposed', `${what} was cancelled: Attention Lab is shutting down.`);
    const cancelled = (): RequestError => new RequestError('cancelled', `${what} was cancelled.`);
    if (hooks.signal?.aborted) throw cancelled();
    // A request that reads a cancel flag gets one (null where there is no SharedArrayBuffer:
    // ending the worker cancels).
    const flag = 'cancel' in modelRequests.table[kind].params ? cancelFlag() : undefined;
    const worker = this.start();
    await this.ready;
    if (this.disposed || this.worker !== worker)
      throw new RequestError('disposed', `${what} was cancelled: the model worker stopped.`);
    if (hooks.signal?.aborted) throw cancelled();
    let sent: number | null = null;
    const onAbort = (): void => {
      if (flag) Atomics.store(flag, 0, 1); // the worker stops at its next check
      if (sent === null) return;
      this.forget(sent);
      this.pending.reject(sent, 'cancelled', `${what} was cancelled.`);
      if (flag === null) this.restart(what, 'was cancelled'); // no flag to set: stop the work by ending the worker
    };
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.pending.start<ModelAnswer<K>>(what, timeoutMs, (id) => {
        // Only what the request's declaration says it streams reaches its hooks.
        if (hooks.onToken && streams === 'token') this.tokenListeners.set(id, hooks.onToken);
        if (hooks.onProgress && streams === 'progress') this.progressListeners.set(id, hooks.onProgress);
        this.kinds.set(id, kind);
        sent = id;
        worker.post(modelRequests.request(kind, id, flag ? { ...params, cancel: flag } : params));
      });
    } finally {
      hooks.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Drops what streams back to request `id`. */
  private forget(id: number): void {
    this.kinds.delete(id);
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
        let msg: FromModelWorker;
        try {
          msg = validateFromModelWorker(raw);
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

  private route(msg: Exclude<FromModelWorker, { type: 'worker/ready' }>): void {
    switch (msg.type) {
      case 'model/didToken':
        this.tokenListeners.get(msg.id)?.(msg.token, msg.logprob);
        return;
      case 'model/didProgress':
        this.progressListeners.get(msg.id)?.(msg.done, msg.total);
        return;
      case 'model/didFail':
        this.forget(msg.id);
        this.pending.reject(msg.id, msg.error.code, msg.error.message);
        return;
      default:
        this.finish(msg.id, msg.type, msg.output);
    }
  }

  /** Answers request `id` with the `output` of an answer of type `type`, when that answers the kind it asked. */
  private finish(id: number, type: string, output: unknown): void {
    const asked = this.kinds.get(id);
    this.forget(id);
    if (asked !== undefined && modelRequests.answeredKind(type) !== asked) {
      this.log(`The model worker answered request ${id} (model/${asked}) with ${type}; it failed.`);
      this.pending.reject(id, 'protocol', `The model worker answered model/${asked} with ${type}; try again.`);
    } else if (!this.pending.resolve(id, output))
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
    this.kinds.clear();
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
