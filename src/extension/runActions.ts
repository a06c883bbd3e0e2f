/**
 * Commands on one run: open a run folder from disk ("Open Run…", e.g. one the command
 * line trained), reveal its folder, delete it (after a modal confirmation; never while it
 * trains), export it for PyTorch into a chosen folder, and show the model's attention on
 * the editor's selection in the dashboard.
 *
 * Leaves out: training and decoding (trainCommand.ts, decodeCommand.ts).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { messageOf, showError } from './errors';
import { pickRun } from './pickRun';
import type { Services } from './services';
import { selectedText } from './decodeCommand';

/** "Open Run…": adds a run folder chosen on disk to the runs and opens it in the dashboard. */
export async function openRunCommand(s: Services, arg?: unknown): Promise<string | undefined> {
  let dir = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? arg.fsPath : undefined;
  if (!dir) {
    const picked = await vscode.window.showOpenDialog({ title: 'Attention Lab: open a run folder (it holds run.json)', canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Open Run', ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}) });
    if (!picked?.[0]) return undefined;
    dir = picked[0].fsPath;
  }
  const lab = s.lab.get();
  if (!lab.isRunFolder(dir)) {
    await showError(s.log, `${dir} is not a run folder (it has no run.json). Choose a folder that "Attention Lab: Train" or \`attention-lab train\` created.`);
    return undefined;
  }
  const listing = lab.readListing(dir);
  if (!listing.ok) {
    await showError(s.log, `Cannot open ${path.basename(dir)}: ${listing.error}`);
    return undefined;
  }
  const runDir = path.resolve(dir);
  if (path.dirname(runDir) !== path.resolve(s.runsRoot().root)) await s.registry.addOpened(runDir);
  await s.registry.select(runDir);
  s.runs.refresh();
  s.dashboard.open(runDir);
  return runDir;
}

/** Reveals a run's folder: in the Explorer when it is inside the workspace, else in the OS (desktop) or by opening run.json. */
export async function revealRunCommand(s: Services, arg: unknown): Promise<void> {
  const run = await pickRun(s, arg, { trained: false, purpose: 'reveal' });
  if (!run) return;
  const uri = vscode.Uri.file(run.runDir);
  if (vscode.workspace.getWorkspaceFolder(uri)) {
    await vscode.commands.executeCommand('revealInExplorer', uri);
    return;
  }
  if (vscode.env.uiKind === vscode.UIKind.Desktop && vscode.env.remoteName === undefined) {
    await vscode.commands.executeCommand('revealFileInOS', uri);
    return;
  }
  await vscode.window.showTextDocument(vscode.Uri.file(path.join(run.runDir, 'run.json')), { preview: true });
  void vscode.window.showInformationMessage(`${run.name} is in ${run.runDir}.`);
}

/** Deletes a run folder after a modal confirmation. */
export async function deleteRunCommand(s: Services, arg: unknown): Promise<boolean> {
  const run = await pickRun(s, arg, { trained: false, purpose: 'delete' });
  if (!run) return false;
  if (run.active) {
    void vscode.window.showWarningMessage(`${run.name} is training; stop it before deleting it.`);
    return false;
  }
  const answer = await vscode.window.showWarningMessage(`Delete ${run.name}?`, { modal: true, detail: `This removes ${run.runDir} and everything in it (model, checkpoints, metrics, snapshots). It cannot be undone.` }, 'Delete');
  if (answer !== 'Delete') return false;
  try {
    await fs.promises.rm(run.runDir, { recursive: true, force: true });
  } catch (e) {
    await showError(s.log, `Could not delete ${run.runDir}: ${messageOf(e)}`, e);
    return false;
  }
  await s.registry.removeOpened(run.runDir);
  if (s.registry.selected() === run.runDir) await s.registry.select(null);
  s.log.info(`Deleted ${run.runDir}.`);
  s.runs.refresh();
  s.dashboard.reload();
  return true;
}

/** Exports a run's model for PyTorch into a folder the user picks (or `outDir`). */
export async function exportRunCommand(s: Services, arg: unknown, outDir?: string): Promise<string[] | undefined> {
  const run = await pickRun(s, arg, { trained: true, purpose: 'export' });
  if (!run) return undefined;
  let out = outDir;
  if (!out) {
    const picked = await vscode.window.showOpenDialog({ title: `Attention Lab: export ${run.name} for PyTorch into…`, canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Export Here' });
    if (!picked?.[0]) return undefined;
    out = picked[0].fsPath;
  }
  const target = path.join(out, path.basename(run.runDir));
  let force = false;
  if (fs.existsSync(target) && fs.statSync(target).isDirectory() && fs.readdirSync(target).length > 0) {
    const replace = await vscode.window.showWarningMessage(`${target} already exists and is not empty. Replace it with this export?`, { modal: true }, 'Replace');
    if (replace !== 'Replace') return undefined;
    force = true;
  }
  let result;
  try {
    result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Attention Lab: exporting ${run.name}` }, () => s.models.exportPytorch(run.runDir, out as string, force));
  } catch (e) {
    await showError(s.log, `Export of ${run.name} failed: ${messageOf(e)}`, e);
    return undefined;
  }
  const names = run.kind === 'decoder-only' ? "nanoGPT's GPT" : "the notebook Transformer's";
  const dir = result.dir;
  s.log.info(`Exported ${run.name} (${result.tensors} tensors, ${names} names) to ${dir}: ${result.files.map((f) => path.basename(f)).join(', ')}`);
  for (const w of result.warnings) s.log.warn(`Export of ${run.name}: ${w}`);
  const warn = result.warnings.length ? ` Notes: ${result.warnings.join('; ')}.` : '';
  void vscode.window.showInformationMessage(`Exported ${run.name} for PyTorch into ${dir} (weights, config, tokenizer, README).${warn}`, 'Open README').then((a) => {
    if (a) void vscode.window.showTextDocument(vscode.Uri.file(path.join(dir, 'README.md')));
  });
  return [...result.files];
}

/** Shows the attention of a trained run on the editor's selection, in the dashboard. */
export async function showAttentionCommand(s: Services, arg: unknown, textArg?: string): Promise<boolean> {
  const text = typeof textArg === 'string' ? textArg : selectedText();
  if (!text) {
    void vscode.window.showInformationMessage('Select some text first: Show Attention draws how every token of it attends to the others, per layer and head.');
    return false;
  }
  const run = await pickRun(s, arg, { trained: true, purpose: 'show attention' });
  if (!run) return false;
  try {
    const snapshot = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Attention Lab: attention of ${run.name}` }, () => s.models.attend(run.runDir, text));
    s.dashboard.showAttention(run.runDir, text, snapshot);
    if (snapshot.truncation !== undefined) void vscode.window.showInformationMessage(`Attention Lab: ${snapshot.truncation}`);
    return true;
  } catch (e) {
    await showError(s.log, `Computing attention with ${run.name} failed: ${messageOf(e)}`, e);
    return false;
  }
}
