/**
 * The `attentionLab.*` context keys that package.json's `when` clauses read, set only
 * when they change (each set is a round trip to the renderer).
 *
 * Leaves out: computing the values (the controller and the runs tree publish them).
 */

import * as vscode from 'vscode';

/** Names of the keys. */
export type ContextKey =
  | 'attentionLab.isTraining'
  | 'attentionLab.isPaused'
  | 'attentionLab.hasRuns'
  | 'attentionLab.hasTrainedRun'
  | 'attentionLab.hasScores';

/** Sets context keys, skipping values that did not change. */
export class ContextKeys {
  private readonly values = new Map<ContextKey, boolean>();

  /** Sets `key` to `value` (a no-op when it already has it). */
  set(key: ContextKey, value: boolean): void {
    if (this.values.get(key) === value) return;
    this.values.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  }

  /** The last value set (false before). */
  get(key: ContextKey): boolean {
    return this.values.get(key) ?? false;
  }
}
