/**
 * The dashboard panel (one at a time): opens or reveals it, restores it after a window
 * reload through a `WebviewPanelSerializer` (the page keeps its own UI state with
 * `getState` / `setState`; the host resends the data), and limits what the page may load
 * to the dashboard bundle and the extension's media. Closing the panel only ends its
 * messaging: training, the status bar and the runs go on.
 *
 * Leaves out: the messages (dashboardConnection.ts) and the page itself (webview/).
 */

import * as vscode from 'vscode';
import type { EvaluationRecord } from '../../protocol/evaluation';
import type { AttentionSnapshot, DecodeOutput, DecodeParams } from '../../protocol/model';
import type { DashboardCalls } from '../base/dashboardCalls';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { messageOf } from '../base/errors';
import { dashboardHtml, makeNonce } from './dashboardHtml';
import type { ConnectionDeps } from './dashboardConnection';
import { saveExportFile } from './exportSave';
import { DashboardConnection } from './dashboardConnection';

/** The panel's view type (package.json's `onWebviewPanel:` activation event names it). */
export const DASHBOARD_VIEW_TYPE = 'attentionLab.dashboard';

/** Opens, restores and tracks the dashboard panel. */
export class DashboardManager implements DisposableLike, DashboardCalls {
  private readonly store = new DisposableStore();
  private panel: vscode.WebviewPanel | null = null;
  private connection: DashboardConnection | null = null;
  private readonly deps: ConnectionDeps;

  constructor(
    private readonly extensionUri: vscode.Uri,
    deps: Omit<ConnectionDeps, 'saveExport' | 'resume'>,
  ) {
    this.deps = {
      ...deps,
      saveExport: (msg) => saveExportFile(msg, deps.log),
      resume: (runDir) => vscode.commands.executeCommand('attentionLab.run.resume', runDir),
    };
    this.store.add(deps.active.onDidChange((id) => id !== null && this.connection?.showActive(id)));
    this.store.add(
      vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel: vscode.WebviewPanel, state: unknown) => {
          const runId =
            typeof (state as { runId?: unknown } | undefined)?.runId === 'string'
              ? (state as { runId: string }).runId
              : null;
          this.deps.log.info('Restoring the dashboard after a reload.');
          this.attach(panel, runId);
        },
      }),
    );
  }

  /** True while a dashboard panel exists. */
  get isOpen(): boolean {
    return this.panel !== null;
  }

  /** Opens the dashboard (or reveals it) showing `runId` (the live or newest run when null). */
  open(runId: string | null = null, preserveFocus = false): void {
    if (this.panel && this.connection) {
      this.panel.reveal(undefined, preserveFocus);
      if (runId) this.connection.select(runId);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      DASHBOARD_VIEW_TYPE,
      'Attention Lab',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus },
      this.options(),
    );
    this.attach(panel, runId);
  }

  /**
   * Shows the attention of a text (Show Attention for Selection) in the run's own Attention
   * and Heads tabs, as if it had been typed in their text box: the run stays what it is (its
   * header, its training snapshots a click away), so no other run's data is ever shown under
   * its name.
   */
  async showAttention(runDir: string, snapshot: AttentionSnapshot): Promise<void> {
    const listing = await this.deps.lab.get().readListing(this.deps.fs, runDir);
    const shown = listing.ok ? listing.summary.runDir : runDir;
    this.open(shown);
    this.connection?.afterLoad([
      { type: 'dashboard/didAttend', runDir: shown, snapshot },
      { type: 'dashboard/show', runDir: shown, tab: 'attention' },
    ]);
  }

  /**
   * Puts a decode made outside the dashboard (the Decode command) into its playground: the
   * input, the tokens with their probabilities, and their attention. The tab the user is on
   * stays (the text itself is in the editor the command opened).
   */
  showDecode(runDir: string, params: DecodeParams, output: DecodeOutput): void {
    this.deps.log.info(
      `Decode of ${JSON.stringify(params.input.slice(0, 40))}: ${JSON.stringify(output.text.slice(0, 200))}`,
    );
    this.open(runDir, true);
    this.connection?.afterLoad([{ type: 'playground/didDecode', runDir, params, output }]);
  }

  /** Adds a run's new evaluation to an open dashboard (a closed one reads it from evaluations.jsonl when it opens). */
  showEvaluation(runDir: string, evaluation: EvaluationRecord): void {
    this.connection?.afterLoad([{ type: 'run/didEvaluate', runDir, evaluation }]);
  }

  /** Resends every run to an open dashboard. */
  reload(): void {
    this.connection?.reload();
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      enableFindWidget: true,
      retainContextWhenHidden: false,
      localResourceRoots: [
        vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview'),
        vscode.Uri.joinPath(this.extensionUri, 'media'),
      ],
    };
  }

  private attach(panel: vscode.WebviewPanel, runId: string | null): void {
    this.connection?.dispose();
    this.panel = panel;
    panel.webview.options = this.options();
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icon.png');
    const connection = new DashboardConnection(panel, this.deps, runId);
    this.connection = connection;
    const webviewDir = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    try {
      panel.webview.html = dashboardHtml({
        cspSource: panel.webview.cspSource,
        nonce: makeNonce(),
        scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(webviewDir, 'dashboard.js')).toString(),
        styleUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(webviewDir, 'dashboard.css')).toString(),
        title: 'Attention Lab',
      });
    } catch (e) {
      this.deps.log.error(`Could not build the dashboard page: ${messageOf(e)}`);
    }
    const sub = panel.onDidDispose(() => {
      sub.dispose();
      connection.dispose();
      if (this.panel === panel) {
        this.panel = null;
        this.connection = null;
      }
    });
  }

  /** Closes the panel (if open) and unregisters the serializer (idempotent). */
  dispose(): void {
    this.connection?.dispose();
    this.connection = null;
    const p = this.panel;
    this.panel = null;
    p?.dispose();
    this.store.dispose();
  }
}
