/**
 * "Attention Lab: Open PyTorch Checkpoint…": a .safetensors or torch.save (.bin/.pt/.pth) checkpoint (ours, nanoGPT's,
 * Hugging Face GPT-2's or the seed notebook's), or the folder holding it, becomes a run
 * folder under the runs folder — imported in the model worker (lab/interop/importCheckpoint.ts, the
 * job `attention-lab import` runs) behind a cancellable progress notification in megabytes
 * read — and opens in the dashboard, where its attention, Score Selection, Decode and export
 * work as for any run.
 *
 * Leaves out: the import itself, and fine-tuning options (`attention-lab import --data`).
 */

import * as vscode from 'vscode';
import { formatBytes, formatCompact } from '../../common/format';
import type { LabFs } from '../../lab/files/labFs';
import { exists } from '../../lab/files/labFs';
import type { ImportOutput } from '../../protocol/modelWorker';
import { TRUST_ACTION, messageOf, showError } from '../base/errors';
import { withWorkerProgress } from './workerProgress';
import type { DashboardCalls } from '../base/dashboardCalls';
import type { ExtensionHost } from '../host/extensionHost';
import type { ActiveRun } from '../runs/activeRun';
import type { RunsModel } from '../runs/runsModel';
import type { RunsRoot } from '../runs/runStore';
import type { ModelClient } from '../workers/modelClient';

/** What importing a PyTorch checkpoint uses. */
export interface ImportDeps {
  readonly log: vscode.LogOutputChannel;
  readonly host: Pick<ExtensionHost, 'fs' | 'pathOf' | 'uriOf'>;
  readonly models: Pick<ModelClient, 'request'>;
  readonly runs: RunsModel;
  readonly active: ActiveRun;
  readonly dashboard: Pick<DashboardCalls, 'open'>;
  runsRoot(): RunsRoot;
  workspaceDir(): string | null;
}

/** A new folder under `root` named after the checkpoint: `<name>`, `<name>-2`, … */
export async function importRunDir(fs: LabFs, root: string, from: string): Promise<string> {
  const base = fs.basename(from).replace(/\.(safetensors|bin|pt|pth|ckpt)$/i, '') || 'checkpoint';
  const name = base === 'model' || base === 'pytorch_model' ? fs.basename(fs.dirname(from)) || 'checkpoint' : base;
  let dir = fs.join(root, `${name}-imported`);
  for (let i = 2; await exists(fs, dir); i++) dir = fs.join(root, `${name}-imported-${i}`);
  return dir;
}

async function pickCheckpoint(s: ImportDeps): Promise<string | undefined> {
  const dir = s.workspaceDir();
  const picked = await vscode.window.showOpenDialog({
    title:
      'Attention Lab: a PyTorch checkpoint (.safetensors, .bin, .pt) or the folder holding it with config.json and ' +
      'the tokenizer',
    canSelectFiles: true,
    canSelectFolders: true,
    canSelectMany: false,
    openLabel: 'Import',
    filters: { 'PyTorch checkpoints': ['safetensors', 'bin', 'pt', 'pth', 'ckpt'] },
    ...(dir ? { defaultUri: s.host.uriOf(dir) } : {}),
  });
  const uri = picked?.[0];
  if (!uri) return undefined;
  const p = s.host.pathOf(uri);
  if (p === null) {
    void vscode.window.showWarningMessage(
      'Attention Lab reads checkpoints from this machine’s disk; choose one there, not in a virtual ' +
        'or remote workspace.',
    );
    return undefined;
  }
  return p;
}

function importWithProgress(s: ImportDeps, from: string, outDir: string): Thenable<ImportOutput | undefined> {
  return withWorkerProgress(
    `Attention Lab: importing ${s.host.fs.basename(from)}`,
    (done, total) => `${formatBytes(done)} of ${formatBytes(total)}`,
    (hooks) => s.models.request('import', { from, outDir }, hooks),
  );
}

/**
 * Imports `arg` (a path or Uri; else one chosen in a dialog) and opens the new run in the
 * dashboard. Resolves to what was imported, or undefined when cancelled or failed (failures
 * are shown with "Open Log"; nothing is written).
 */
export async function openPytorchCheckpointCommand(s: ImportDeps, arg?: unknown): Promise<ImportOutput | undefined> {
  if (!vscode.workspace.isTrusted) {
    showError(
      s.log,
      'This workspace is in Restricted Mode, so Attention Lab does not read checkpoints into it. ' +
        'Trust the workspace first.',
      undefined,
      TRUST_ACTION,
    );
    return undefined;
  }
  const { fs } = s.host;
  const from =
    typeof arg === 'string'
      ? arg
      : arg instanceof vscode.Uri
        ? (s.host.pathOf(arg) ?? undefined)
        : await pickCheckpoint(s);
  if (!from) return undefined;
  const outDir = await importRunDir(fs, s.runsRoot().root, fs.resolve(from));
  let out: ImportOutput | undefined;
  try {
    out = await importWithProgress(s, from, outDir);
  } catch (e) {
    await showError(s.log, `Importing ${fs.basename(from)} failed: ${messageOf(e)}`, e);
    return undefined;
  }
  if (!out) {
    s.log.info(`Import of ${from} cancelled; nothing was written.`);
    return undefined;
  }
  s.log.info(
    `Imported ${out.modelFile} (${out.layoutText}): ${formatCompact(out.params)} parameters, ` +
      `tokenizer ${out.tokenizer} → ${out.runDir}`,
  );
  for (const n of out.notes) s.log.info(`  ${n}`);
  await s.runs.refresh();
  await s.active.set(out.runDir);
  s.dashboard.open(out.runDir);
  void vscode.window.showInformationMessage(
    `Imported ${fs.basename(from)} (${out.layoutText}, ${formatCompact(out.params)} parameters) as ` +
      `${fs.basename(out.runDir)}.`,
  );
  return out;
}
