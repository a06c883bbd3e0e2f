/**
 * Requests in flight to a worker: each gets an id, settles exactly once — with the
 * answer, with the worker's error, on timeout, or when the worker goes away — and never
 * leaks its timer (requests time out with an error: docs/ARCHITECTURE.md, "The protocol"). Timers are injected so
 * the rules are unit-tested without waiting.
 *
 * Leaves out: the transport (modelClient.ts posts and routes messages).
 */

/** A failure of a request, with a code the UI can react to. */
export class RequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

/** Timer functions (the host passes the real ones). */
export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

interface Entry {
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: RequestError) => void;
  readonly timer: unknown;
  readonly what: string;
}

/** The requests one client has in flight. */
export class PendingRequests {
  private readonly entries = new Map<number, Entry>();
  private nextId = 1;

  /** `onTimeout` runs after a request timed out (e.g. to restart a stuck worker). */
  constructor(
    private readonly timers: Timers,
    private readonly onTimeout: (what: string) => void = () => undefined,
  ) {}

  /** Number of requests not yet settled. */
  get size(): number {
    return this.entries.size;
  }

  /** Registers a request; `send(id)` posts it. Resolves with what `resolve(id, …)` passes. */
  start<T>(what: string, timeoutMs: number, send: (id: number) => void): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = this.timers.set(() => {
        const e = this.settle(id);
        if (!e) return;
        e.reject(
          new RequestError(
            'timeout',
            `${what} took longer than ${Math.round(timeoutMs / 1000)} s and was abandoned; try a ` +
              `shorter input or a smaller model.`,
          ),
        );
        this.onTimeout(what);
      }, timeoutMs);
      this.entries.set(id, { resolve: resolve as (v: unknown) => void, reject, timer, what });
      try {
        send(id);
      } catch (e) {
        this.settle(id)?.reject(
          new RequestError('internal', `${what} could not be sent: ${(e as Error)?.message ?? String(e)}`),
        );
      }
    });
  }

  /** True when `id` is in flight. */
  has(id: number): boolean {
    return this.entries.has(id);
  }

  /** Answers request `id`; an unknown or settled id is ignored (returns false). */
  resolve(id: number, value: unknown): boolean {
    const e = this.settle(id);
    e?.resolve(value);
    return !!e;
  }

  /** Fails request `id`; an unknown or settled id is ignored (returns false). */
  reject(id: number, code: string, message: string): boolean {
    const e = this.settle(id);
    e?.reject(new RequestError(code, message));
    return !!e;
  }

  /** Fails every request in flight (the worker died or the client is disposed). */
  rejectAll(code: string, message: string): void {
    for (const id of [...this.entries.keys()]) this.reject(id, code, message);
  }

  private settle(id: number): Entry | undefined {
    const e = this.entries.get(id);
    if (!e) return undefined;
    this.entries.delete(id);
    this.timers.clear(e.timer);
    return e;
  }
}
