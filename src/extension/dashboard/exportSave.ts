/**
 * Saving what the dashboard exported (`export/save`): a save dialog proposing the page's file
 * name in the first workspace folder (else where the dialog starts), the file written there, and a
 * notification with "Open" (images open in VS Code's image preview, SVG and CSV as text).
 * Cancelling the dialog writes nothing.
 *
 * Leaves out: checking the content (exportFile.ts) and making it (webview/export/exportMenu.ts).
 */

import * as vscode from 'vscode';
import type { ExportKind } from '../../protocol/webview';
import { exportBytes } from './exportFile';

const FILTERS: Readonly<Record<ExportKind, Record<string, string[]>>> = {
  png: { 'PNG image': ['png'] },
  svg: { 'SVG image': ['svg'] },
  csv: { 'CSV table': ['csv'] },
};

/** Asks where to save `fileName` and writes it; returns the written file, or null when cancelled. */
export async function saveExportFile(
  msg: { readonly fileName: string; readonly kind: ExportKind; readonly content: string },
  log: vscode.LogOutputChannel,
): Promise<vscode.Uri | null> {
  try {
    const bytes = exportBytes(msg.fileName, msg.kind, msg.content);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      title: `Attention Lab: save ${msg.kind.toUpperCase()}`,
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, msg.fileName) } : {}),
      filters: FILTERS[msg.kind],
      saveLabel: 'Save',
    });
    if (!target) return null;
    await vscode.workspace.fs.writeFile(target, bytes);
    log.info(`Saved ${target.toString(true)} (${bytes.length} bytes).`);
    void vscode.window
      .showInformationMessage(`Saved ${vscode.workspace.asRelativePath(target)}.`, 'Open')
      .then((choice) => {
        if (choice === 'Open') void vscode.commands.executeCommand('vscode.open', target);
      });
    return target;
  } catch (e) {
    const text = e instanceof Error ? e.message : String(e);
    log.warn(`Export of ${msg.fileName} failed: ${text}`);
    void vscode.window.showErrorMessage(`Could not save ${msg.fileName}: ${text}`);
    return null;
  }
}
