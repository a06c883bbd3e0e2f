/**
 * Ownership of everything that must be released: listeners, panels, workers, timers,
 * decorations. A `DisposableStore` disposes what it holds in reverse order of adding,
 * exactly once (CONTRIBUTING.md, "Disposables"); adding to a disposed store disposes the newcomer at once so
 * nothing leaks after shutdown. Mirrors VS Code's `Disposable` shape without importing it,
 * so the rules are unit-tested.
 *
 * Leaves out: async disposal ordering (an async `dispose` is started, not awaited).
 */

/** Anything with a `dispose()`. */
export interface DisposableLike {
  dispose(): unknown;
}

/** A disposable that runs `fn` once. */
export function toDisposable(fn: () => unknown): DisposableLike {
  let done = false;
  return {
    dispose(): void {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/** Holds disposables and releases them together, in reverse order, once. */
export class DisposableStore implements DisposableLike {
  private readonly items: DisposableLike[] = [];
  private disposed = false;

  /** True once `dispose` ran. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Takes ownership of `d` and returns it. */
  add<T extends DisposableLike>(d: T): T {
    if (this.disposed) {
      d.dispose();
      return d;
    }
    this.items.push(d);
    return d;
  }

  /** Disposes `d` now and forgets it. */
  delete(d: DisposableLike): void {
    const i = this.items.indexOf(d);
    if (i >= 0) this.items.splice(i, 1);
    d.dispose();
  }

  /** Disposes everything held, last added first; errors are collected and rethrown after all ran. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const errors: unknown[] = [];
    for (const d of this.items.splice(0).reverse()) {
      try {
        d.dispose();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} disposables failed`);
  }
}
