/**
 * Where run folders live and which ones the extension shows: the runs root (extension
 * storage by default, a workspace folder when `attentionLab.runs.location` says so and the
 * workspace is trusted) plus run folders opened from elsewhere ("Open Run…", e.g. made by
 * the command line), remembered in workspace state so they survive reloads.
 *
 * Leaves out: reading the folders (src/lab/editor/extensionLab.ts) and showing them (runsTree.ts).
 */

import type { LabFs } from '../../lab/files/labFs';
import { exists } from '../../lab/files/labFs';
import { isInside } from '../base/folders';
import type { Settings } from '../base/settings';

/** Where new runs go, and why. */
export interface RunsRoot {
  readonly root: string;
  readonly where: 'extensionStorage' | 'workspace';
  /** Set when the setting asked for something that could not be honored. */
  readonly note: string | null;
}

/** Inputs of {@link resolveRunsRoot}. */
export interface RootInputs {
  readonly settings: Settings['runs'];
  readonly trusted: boolean;
  /** Extension storage for this workspace (or global storage without one). */
  readonly storageDir: string;
  /** First workspace folder the host's file system reaches, or null. */
  readonly workspaceDir: string | null;
}

/** The runs root for the settings (paths of `fs`); falls back to extension storage with a note. */
export function resolveRunsRoot(fs: LabFs, i: RootInputs): RunsRoot {
  const storage = fs.join(i.storageDir, 'runs');
  if (i.settings.location !== 'workspace') return { root: storage, where: 'extensionStorage', note: null };
  if (!i.trusted)
    return {
      root: storage,
      where: 'extensionStorage',
      note: 'Runs are kept in extension storage because this workspace is in Restricted Mode.',
    };
  if (!i.workspaceDir)
    return {
      root: storage,
      where: 'extensionStorage',
      note: 'Runs are kept in extension storage because no workspace folder on disk is open.',
    };
  const root = fs.resolve(i.settings.folder, i.workspaceDir);
  if (!isInside(fs, i.workspaceDir, root) || root === fs.resolve(i.workspaceDir)) {
    return {
      root: storage,
      where: 'extensionStorage',
      note:
        `attentionLab.runs.folder "${i.settings.folder}" points outside the workspace; runs are ` +
        `kept in extension storage instead.`,
    };
  }
  return { root, where: 'workspace', note: null };
}

/** Memento-like storage (VS Code's `workspaceState`). */
export interface StateStore {
  get<T>(key: string, fallback: T): T;
  update(key: string, value: unknown): Thenable<void>;
}

const OPENED_KEY = 'attentionLab.openedRuns';
/** Run folders opened from outside the runs root (the active run is activeRun.ts's). */
export class RunRegistry {
  constructor(
    private readonly state: StateStore,
    private readonly fs: LabFs,
  ) {}

  /** Opened run folders that still exist. */
  async opened(): Promise<string[]> {
    const dirs = this.state.get<string[]>(OPENED_KEY, []);
    const here = await Promise.all(dirs.map((d) => exists(this.fs, this.fs.join(d, 'run.json'))));
    return dirs.filter((_, i) => here[i]);
  }

  /** Remembers an opened run folder. */
  async addOpened(runDir: string): Promise<void> {
    const all = new Set(this.state.get<string[]>(OPENED_KEY, []));
    all.add(this.fs.resolve(runDir));
    await this.state.update(OPENED_KEY, [...all]);
  }

  /** Forgets an opened run folder. */
  async removeOpened(runDir: string): Promise<void> {
    const left = this.state.get<string[]>(OPENED_KEY, []).filter((d) => d !== this.fs.resolve(runDir));
    await this.state.update(OPENED_KEY, left);
  }
}
