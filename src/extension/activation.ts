/**
 * Activation, the same on both extension hosts (the entries: extension.ts for desktop VS
 * Code, webExtension.ts for the web; host/extensionHost.ts says what differs). `activateLab` only
 * wires things up — log channel, context keys, training controller, status bar, views,
 * dashboard serializer, commands — and stays well under 100 ms: on desktop the engine and
 * lab load from a separate bundle on first use (host/extensionHost.node.ts), the training and model
 * workers start when first needed, and the first read of the runs happens after activation
 * returns. Returns a small API the extension-host tests read.
 *
 * Leaves out: everything the commands do (their modules).
 */

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
import type { ExtensionHost } from './host/extensionHost';
import { ModelClient } from './workers/modelClient';
import { RunRegistry, resolveRunsRoot } from './runs/runStore';
import type { RunItem } from './runs/runsModel';
import { RunsModel } from './runs/runsModel';
import { RunsTree } from './runs/runsTree';
import { ScoreDecorations } from './commands/scoreDecorations';
import type { Services } from './services';
import type { Settings } from './base/settings';
import { readSettings, trustedReader } from './base/settings';
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
  /**
   * Announces interrupted runs not announced yet (what activation does after the first read); resolves to the messages
   * shown.
   */
  readonly announceInterrupted: () => Promise<readonly string[]>;
  /**
   * Which extension host runs the extension, and what its global scope offers (the web tests check there is no
   * `process`).
   */
  readonly host: {
    readonly kind: 'node' | 'web';
    readonly hasProcess: boolean;
    readonly crossOriginIsolated: boolean;
    readonly threads: string;
  };
  /** The host's spelling of paths (a file path on desktop, a URI on the web), to and from URIs. */
  readonly paths: { readonly of: (uri: vscode.Uri) => string | null; readonly uri: (p: string) => vscode.Uri };
}

/** Activates the extension on `host`. */
export function activateLab(context: vscode.ExtensionContext, host: ExtensionHost): AttentionLabApi {
  const t0 = performance.now();
  const store = new DisposableStore();
  context.subscriptions.push(store);
  const log = store.add(vscode.window.createOutputChannel('Attention Lab', { log: true }));
  const keys = new ContextKeys();
  const lab = host.lab;
  // The first workspace folder this host's file system reaches (on disk for Node; any on the web).
  const workspaceDir = (): string | null => {
    for (const f of vscode.workspace.workspaceFolders ?? []) {
      const p = host.pathOf(f.uri);
      if (p !== null) return p;
    }
    return null;
  };
  const warned = new Set<string>();
  const settings = (): Settings => {
    const config = vscode.workspace.getConfiguration();
    const r = readSettings(
      trustedReader(
        vscode.workspace.isTrusted,
        (key) => config.get(key),
        (key) => config.inspect(key),
      ),
    );
    for (const p of r.problems) if (!warned.has(p.message) && warned.add(p.message)) log.warn(p.message);
    for (const n of r.notices) if (!warned.has(n) && warned.add(n)) log.info(n);
    return r.settings;
  };
  const storageDir = host.pathOf(context.storageUri ?? context.globalStorageUri) ?? '';
  const runsRoot = (): ReturnType<typeof resolveRunsRoot> =>
    resolveRunsRoot(host.fs, {
      settings: settings().runs,
      trusted: vscode.workspace.isTrusted,
      storageDir,
      workspaceDir: workspaceDir(),
    });
  const registry = new RunRegistry(context.workspaceState, host.fs);
  const controller = store.add(new TrainingController(host.startTrainingWorker, host.fs, log, host.lockIdentity));
  const models = store.add(new ModelClient(host.startModelWorker, (m) => log.warn(m)));
  const runs = store.add(
    new RunsModel(
      lab,
      host.fs,
      controller,
      async () => ({ root: runsRoot().root, opened: await registry.opened() }),
      (m) => log.warn(m),
    ),
  );
  const active = store.add(new ActiveRun(context.workspaceState, runs, (d) => host.fs.resolve(d)));
  const dashboard = store.add(
    new DashboardManager(context.extensionUri, {
      log,
      lab,
      pytorch: host.pytorch,
      fs: host.fs,
      controller,
      models,
      runs,
      active,
    }),
  );
  const s: Services = {
    context,
    log,
    host,
    lab,
    controller,
    runs,
    registry,
    active,
    models,
    dashboard,
    keys,
    settings,
    runsRoot,
    workspaceDir,
  };

  store.add(new TrainingStatusBar(controller, 'attentionLab.openDashboard', active.onDidChange));
  store.add(new ActiveRunStatusBar(active, runs, 'attentionLab.pickActiveRun'));
  store.add(
    controller.onDidChange((st) => {
      keys.set('attentionLab.isTraining', st !== null);
      keys.set('attentionLab.isPaused', st?.paused ?? false);
    }),
  );
  store.add(
    runs.onDidChange((items) => {
      keys.set('attentionLab.hasRuns', items.length > 0);
      keys.set(
        'attentionLab.hasTrainedRun',
        items.some((r) => r.hasModel && r.error === null),
      );
    }),
  );
  const tree = store.add(new RunsTree(runs, active));
  store.add(
    vscode.window.createTreeView('attentionLab.runs', {
      treeDataProvider: tree,
      showCollapseAll: false,
      canSelectMany: true,
    }),
  );
  store.add(vscode.window.registerTreeDataProvider('attentionLab.config', store.add(new ConfigView(s))));
  const scores = store.add(new ScoreDecorations(s));
  for (const d of registerCommands(s, scores)) store.add(d);
  store.add(
    vscode.workspace.onDidChangeConfiguration(
      (e) => e.affectsConfiguration('attentionLab.runs') && void runs.refresh(),
    ),
  );
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => void runs.refresh()));

  // The first read of the runs (it loads the engine bundle) happens after activation; then a
  // run that was training when the window reloaded is announced, with Resume.
  const interrupted = async (): Promise<readonly string[]> =>
    announceInterrupted(
      context.workspaceState,
      runs.isLoaded ? runs.items() : await runs.refresh(),
      (m, ...a) => vscode.window.showWarningMessage(m, ...a),
      (r) => resumeCommand(s, r.runDir),
    );
  const first = setTimeout(() => {
    interrupted().catch((e: unknown) => log.warn(`Could not announce interrupted runs: ${String(e)}`));
  }, 0);
  store.add({ dispose: () => clearTimeout(first) });

  const activateMs = performance.now() - t0;
  const moduleMs =
    typeof __attentionLabBundleStart === 'number' && typeof __attentionLabBundleEnd === 'number'
      ? __attentionLabBundleEnd - __attentionLabBundleStart
      : 0;
  const hostInfo = {
    kind: host.kind,
    hasProcess: typeof (globalThis as { process?: unknown }).process !== 'undefined',
    crossOriginIsolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
    threads: host.threadsNote(),
  };
  const where =
    host.kind === 'web'
      ? `the web worker extension host (typeof process: ` +
        `${typeof (globalThis as { process?: unknown }).process}; crossOriginIsolated: ${hostInfo.crossOriginIsolated})`
      : 'the Node extension host';
  log.info(
    `Activated in ${formatDuration(activateMs / 1000)} (bundle evaluated in ` +
      `${formatDuration(moduleMs / 1000)}) in ${where}; training runs on ${hostInfo.threads}; runs ` +
      `are kept in ${runsRoot().root}.`,
  );
  return {
    activation: { moduleMs, activateMs },
    engineLoadedAtActivation: lab.isLoaded,
    engineLoaded: () => lab.isLoaded,
    runsRoot: () => runsRoot().root,
    runs: () => runs.items(),
    training: () => controller.state,
    activeRun: () => active.id(),
    announceInterrupted: interrupted,
    host: hostInfo,
    paths: { of: (uri) => host.pathOf(uri), uri: (p) => host.uriOf(p) },
  };
}
