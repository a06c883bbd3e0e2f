/**
 * What every command and view shares, created once in `activate` and passed explicitly
 * (no module-level singletons: CONTRIBUTING.md, "No globals"): the log channel, the lazily loaded lab
 * module, the training controller, the runs, the model worker client, the dashboard, the
 * context keys, and the settings as read right now. Only activation holds the whole object: each
 * room declares the part it uses (`RunPickDeps`, `TrainDeps`, `CommandDeps`…), which this satisfies.
 *
 * Leaves out: creating them (activation.ts) and any command logic.
 */

import type * as vscode from 'vscode';
import type { ActiveRun } from './runs/activeRun';
import type { ContextKeys } from './base/contextKeys';
import type { DashboardManager } from './dashboard/dashboardManager';
import type { ExtensionHost } from './host/extensionHost';
import type { LabLoader } from './host/labLoader';
import type { ModelClient } from './workers/modelClient';
import type { RunRegistry, RunsRoot } from './runs/runStore';
import type { RunsModel } from './runs/runsModel';
import type { Settings } from './base/settings';
import type { TrainingController } from './training/trainingController';

/** The extension's shared objects. */
export interface Services {
  readonly context: vscode.ExtensionContext;
  readonly log: vscode.LogOutputChannel;
  /** What differs between desktop and web: files, paths, workers. */
  readonly host: ExtensionHost;
  /** The engine-side module (`host.lab`). */
  readonly lab: LabLoader;
  readonly controller: TrainingController;
  readonly runs: RunsModel;
  readonly registry: RunRegistry;
  /** The run commands use when they are not given one. */
  readonly active: ActiveRun;
  readonly models: ModelClient;
  readonly dashboard: DashboardManager;
  readonly keys: ContextKeys;
  /** The settings now (problems are logged as warnings). */
  settings(): Settings;
  /** Where new runs go now. */
  runsRoot(): RunsRoot;
  /** The first workspace folder this host's file system reaches (on disk for desktop), or null. */
  workspaceDir(): string | null;
}
