import type { StateStore } from '../../../src/extension/runs/runStore';

/** An in-memory stand-in for VS Code's workspaceState (what runStore's StateStore asks of it). */
export class Memento implements StateStore {
  readonly values = new Map<string, unknown>();
  get<T>(key: string, fallback: T): T {
    return (this.values.has(key) ? this.values.get(key) : fallback) as T;
  }
  update(key: string, value: unknown): Thenable<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }
}
