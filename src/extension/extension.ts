/**
 * The extension's entry point (bundled into dist/extension.js, `vscode` external).
 * `activate` only wires things up — log channel, context keys, training controller,
 * status bar, views, dashboard serializer, commands — and stays well under 100 ms: the
 * engine and lab load from a separate bundle on first use (workers/labLoader.ts), the training
 * and model workers start when first needed, and the first read of the runs happens
 * after activation returns. Returns a small API the extension-host tests read.
 *
 * Leaves out: everything the commands do (their modules).
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatDuration } from '../common/format';
import { ActiveRun } from './runs/activeRun';
import { ActiveRunStatusBar } from './runs/activeRunStatus';
import { registerCommands } from './commands/commands';
import { ConfigView } from './configure/configView';
import { ContextKeys } from './base/contextKeys';
import { DashboardManager } from './dashboard/dashboardManager';
import { DisposableStore } from './base/disposables';
import { announceInterrupted } from './runs/interrupted';
import { LabLoader } from './workers/labLoader';
import { ModelClient } from './workers/modelClient';
import { RunRegistry, resolveRunsRoot } from './runs/runStore';
import type { RunItem } from './runs/runsModel';
import { RunsModel } from './runs/runsModel';
import { RunsTree } from './runs/runsTree';
import { ScoreDecorations } from './commands/scoreDecorations';
import type { Services } from './services';
import type { Settings } from './configure/settings';
import { readSettings } from './configure/settings';
import { TrainingStatusBar } from './training/statusBar';
import type { TrainingState } from './training/trainingController';
import { TrainingController } from './training/trainingController';
import { resumeCommand } from './training/trainCommand';

/** Set by the bundle's first and last lines (scripts/buildExtension.mjs): when its evaluation started and ended. */
declare const __attentionLabBundleStart: number | undefined;
declare const __attentionLabBundleEnd: number | undefined;

/** What `activate` returns (read by the extension-host tests). */
export interface AttentionLabApi {
  /** Milliseconds: evaluating this bundle, and running `activate`. */
  readonly activation: { readonly moduleMs: number; readonly activateMs: number };
  /** Whether the engine bundle was loaded when `activate` returned (it must not be). */
  readonly engineLoadedAtActivation: boolean;
  /** Whether the engine bundle has been loaded yet. */
  readonly engineLoaded: () => boolean;
  readonly runsRoot: () => string;
  readonly runs: () => readonly RunItem[];
  readonly training: () => TrainingState | null;
  /** The active run's folder (activeRun.ts), or null. */
  readonly activeRun: () => string | null;
  /** Announces interrupted runs not announced yet (what activation does after the first read); resolves to the messages shown. */
  readonly announceInterrupted: () => Promise<readonly string[]>;
}

function workspaceDir(): string | null {
  const f = vscode.workspace.workspaceFolders?.find((w) => w.uri.scheme === 'file');
  return f ? f.uri.fsPath : null;
}

/** Activates the extension. */
export function activate(context: vscode.ExtensionContext): AttentionLabApi {
  const t0 = performance.now();
  const store = new DisposableStore();
  context.subscriptions.push(store);
  const log = store.add(vscode.window.createOutputChannel('Attention Lab', { log: true }));
  const dist = path.join(context.extensionPath, 'dist');
  const keys = new ContextKeys();
  const lab = new LabLoader(dist);
  const warned = new Set<string>();
  const settings = (): Settings => {
    const r = readSettings((key) => vscode.workspace.getConfiguration().get(key));
    for (const p of r.problems) if (!warned.has(p.message) && warned.add(p.message)) log.warn(p.message);
    return r.settings;
  };
  const storageDir = (context.storageUri ?? context.globalStorageUri).fsPath;
  const runsRoot = (): ReturnType<typeof resolveRunsRoot> => resolveRunsRoot({ settings: settings().runs, trusted: vscode.workspace.isTrusted, storageDir, workspaceDir: workspaceDir() });
  const registry = new RunRegistry(context.workspaceState);
  const controller = store.add(new TrainingController(path.join(dist, 'worker.js'), log));
  const models = store.add(new ModelClient(path.join(dist, 'modelWorker.js'), (m) => log.warn(m)));
  const runs = store.add(new RunsModel(lab, controller, () => ({ root: runsRoot().root, opened: registry.opened() }), (m) => log.warn(m)));
  const active = store.add(new ActiveRun(context.workspaceState, runs));
  const dashboard = store.add(new DashboardManager(context.extensionUri, { log, lab, controller, models, runs, active }));
  const s: Services = { context, log, lab, controller, runs, registry, active, models, dashboard, keys, settings, runsRoot, workspaceDir };

  store.add(new TrainingStatusBar(controller, 'attentionLab.openDashboard'));
  store.add(new ActiveRunStatusBar(active, runs, 'attentionLab.pickActiveRun'));
  store.add(controller.onDidChange((st) => {
    keys.set('attentionLab.isTraining', st !== null);
    keys.set('attentionLab.isPaused', st?.paused ?? false);
  }));
  store.add(runs.onDidChange((items) => {
    keys.set('attentionLab.hasRuns', items.length > 0);
    keys.set('attentionLab.hasTrainedRun', items.some((r) => r.hasModel && r.error === null));
  }));
  const tree = store.add(new RunsTree(runs, active));
  store.add(vscode.window.createTreeView('attentionLab.runs', { treeDataProvider: tree, showCollapseAll: false, canSelectMany: true }));
  store.add(vscode.window.registerTreeDataProvider('attentionLab.config', store.add(new ConfigView(s))));
  const scores = store.add(new ScoreDecorations(s));
  for (const d of registerCommands(s, scores)) store.add(d);
  store.add(vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('attentionLab.runs') && runs.refresh()));
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => runs.refresh()));

  // The first read of the runs (it loads the engine bundle) happens after activation; then a
  // run that was training when the window reloaded is announced, with Resume.
  const interrupted = (): Promise<readonly string[]> => announceInterrupted(context.workspaceState, runs.isLoaded ? runs.items() : runs.refresh(), (m, ...a) => vscode.window.showWarningMessage(m, ...a), (r) => resumeCommand(s, r.runDir));
  const first = setTimeout(() => {
    if (!runs.isLoaded) runs.refresh();
    interrupted().catch((e: unknown) => log.warn(`Could not announce interrupted runs: ${String(e)}`));
  }, 0);
  store.add({ dispose: () => clearTimeout(first) });

  const activateMs = performance.now() - t0;
  const moduleMs = typeof __attentionLabBundleStart === 'number' && typeof __attentionLabBundleEnd === 'number' ? __attentionLabBundleEnd - __attentionLabBundleStart : 0;
  log.info(`Activated in ${formatDuration(activateMs / 1000)} (bundle evaluated in ${formatDuration(moduleMs / 1000)}); runs are kept in ${runsRoot().root}.`);
  return {
    activation: { moduleMs, activateMs },
    engineLoadedAtActivation: lab.isLoaded,
    engineLoaded: () => lab.isLoaded,
    runsRoot: () => runsRoot().root,
    runs: () => runs.items(),
    training: () => controller.state,
    activeRun: () => active.id(),
    announceInterrupted: interrupted,
  };
}

/** Nothing to do: everything is owned by `context.subscriptions`. */
export function deactivate(): void {
  // Disposing the subscriptions stops training (the run resumes from its last checkpoint).
}
