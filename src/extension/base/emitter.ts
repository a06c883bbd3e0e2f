/**
 * A minimal typed event emitter with VS Code's `Event<T>` shape (`event(listener)` returns
 * a disposable), so modules that must also load outside VS Code (and in unit tests) can
 * publish events. Listener errors are reported, never allowed to stop the other listeners.
 *
 * Leaves out: `thisArgs` and disposable arrays of VS Code's signature.
 */

import type { DisposableLike } from './disposables';

/** Subscribes a listener; dispose the result to unsubscribe. */
export type Event<T> = (listener: (value: T) => void) => DisposableLike;

/** Fires values to its listeners. */
export class Emitter<T> implements DisposableLike {
  private listeners: ((value: T) => void)[] = [];
  private disposed = false;

  constructor(private readonly onListenerError: (e: unknown) => void = () => undefined) {}

  /** The subscription function to hand out. */
  readonly event: Event<T> = (listener) => {
    if (this.disposed) return { dispose: () => undefined };
    this.listeners.push(listener);
    return {
      dispose: () => {
        this.listeners = this.listeners.filter((l) => l !== listener);
      },
    };
  };

  /** Calls every listener with `value`. */
  fire(value: T): void {
    for (const l of [...this.listeners]) {
      try {
        l(value);
      } catch (e) {
        this.onListenerError(e);
      }
    }
  }

  /** Drops every listener (idempotent). */
  dispose(): void {
    this.disposed = true;
    this.listeners = [];
  }
}
