/**
 * The active run: the one run that Score Selection, Show Attention, Decode, Export and the
 * other commands use when they are not given one. This class is its only owner: the Runs
 * view (clicking a run, "Set as Active Run"), the dashboard's run picker, the status bar's
 * quick pick, a command's "… with…" pick and starting or resuming training all set it here,
 * and everything that shows it (the Runs view's marker, the status bar, the dashboard's
 * picker) listens to `onDidChange`. Kept in workspace state, so it survives reloads. A run
 * that was deleted, or whose folder is gone, is no longer active. No VS Code import.
 *
 * Leaves out: choosing a run when the active one does not suit a command (pickRun.ts) and
 * drawing it (runsTree.ts, activeRunStatus.ts, the dashboard).
 */

import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { Emitter } from '../base/emitter';
import type { Event } from '../base/emitter';
import type { RunItem } from './runsModel';
import type { StateStore } from './runStore';

const ACTIVE_KEY = 'attentionLab.selectedRun';

/** What the active run needs of the runs. */
export interface RunsSource {
  find(runDir: string): RunItem | undefined;
  readonly onDidChange: Event<readonly RunItem[]>;
  readonly isLoaded: boolean;
}

/** The active run, persisted per workspace. */
export class ActiveRun implements DisposableLike {
  private readonly store = new DisposableStore();
  private readonly changes = new Emitter<string | null>();
  private last: string | null;

  /** The active run's folder after it changed (null: none). */
  readonly onDidChange: Event<string | null> = this.changes.event;

  constructor(
    private readonly state: StateStore,
    private readonly runs: RunsSource,
    /** The one spelling of a run folder (the host file system's `resolve`). */
    private readonly resolve: (runDir: string) => string,
  ) {
    this.store.add(this.changes);
    this.last = this.state.get<string | null>(ACTIVE_KEY, null);
    // A run that disappeared (deleted here or on disk) stops being the active one.
    this.store.add(
      runs.onDidChange(() => {
        const id = this.id();
        if (id !== this.last) {
          this.last = id;
          this.changes.fire(id);
        }
      }),
    );
  }

  /** The active run's folder, or null (none chosen, or it no longer exists once the runs are read). */
  id(): string | null {
    const id = this.state.get<string | null>(ACTIVE_KEY, null);
    if (id === null) return null;
    if (this.runs.isLoaded && !this.runs.find(id)) return null;
    return id;
  }

  /** The active run, when it is one of the known runs. */
  get(): RunItem | undefined {
    const id = this.id();
    return id === null ? undefined : this.runs.find(id);
  }

  /** Makes `runDir` the active run (null: none); tells the listeners when that changed it. */
  async set(runDir: string | null): Promise<void> {
    const id = runDir === null ? null : this.resolve(runDir);
    await this.state.update(ACTIVE_KEY, id);
    if (id === this.last) return;
    this.last = id;
    this.changes.fire(id);
  }

  dispose(): void {
    this.store.dispose();
  }
}
