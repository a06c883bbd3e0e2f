/**
 * "Attention Lab: Show Attention for Selection": runs a trained model on the editor's selection in the model
 * worker and draws how every token attends to the others, per layer and head, in the dashboard.
 *
 * Leaves out: computing attention (the model worker) and drawing it (the webview).
 */

import * as vscode from 'vscode';
import { messageOf, showError } from '../base/errors';
import { pickRun } from '../runs/pickRun';
import { selectedText } from './decodeCommand';
import type { DashboardCalls } from '../base/dashboardCalls';
import type { RunPickDeps } from '../runs/pickRun';
import type { ModelClient } from '../workers/modelClient';

/** What Show Attention uses. */
export interface AttentionDeps extends RunPickDeps {
  readonly log: vscode.LogOutputChannel;
  readonly models: Pick<ModelClient, 'request'>;
  readonly dashboard: Pick<DashboardCalls, 'showAttention'>;
}

/** Shows the attention of a trained run on the editor's selection, in the dashboard. */
export async function showAttentionCommand(s: AttentionDeps, arg: unknown, textArg?: string): Promise<boolean> {
  const text = typeof textArg === 'string' ? textArg : selectedText();
  if (!text) {
    void vscode.window.showInformationMessage(
      'Select some text first: Show Attention draws how every token of it attends to the others, per layer and head.',
    );
    return false;
  }
  const run = await pickRun(s, arg, { trained: true, purpose: 'show attention' });
  if (!run) return false;
  try {
    const snapshot = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Attention Lab: attention of ${run.name}` },
      () => s.models.request('attend', { runDir: run.runDir, text }),
    );
    await s.dashboard.showAttention(run.runDir, snapshot);
    if (snapshot.truncation !== undefined)
      void vscode.window.showInformationMessage(`Attention Lab: ${snapshot.truncation}`);
    return true;
  } catch (e) {
    await showError(s.log, `Computing attention with ${run.name} failed: ${messageOf(e)}`, e);
    return false;
  }
}
