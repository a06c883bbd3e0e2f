/**
 * Commands on one run: open a run folder from disk ("Open Run…", e.g. one the command
 * line trained), find the runs kept under another identity of this workspace, reveal its folder, rename it and note on
 * it, delete it or several (after one
 * modal confirmation; never while it trains) — the last three act on the row they were invoked
 * on, and given none they ask which run rather than take the active one — and export it for PyTorch into a chosen
 * folder.
 *
 * Leaves out: training, decoding and showing attention (training/trainCommand.ts, commands/decodeCommand.ts,
 * commands/attentionCommand.ts).
 */

import * as vscode from 'vscode';
import { listNames } from '../../lab/files/labFs';
import { runLockProblem } from '../../lab/runs/runLock';
import { shownPath } from '../../lab/files/slashPaths';
import { folderNameOf } from '../../common/fileNames';
import { messageOf, showError } from '../base/errors';
import { pickRun, pickRunToChange, runDirOf } from './pickRun';
import { findStrayRuns } from './strayRuns';
import type { RunItem } from './runsModel';
import type { DashboardCalls } from '../base/dashboardCalls';
import type { ExtensionHost } from '../host/extensionHost';
import type { LabLoader } from '../host/labLoader';
import type { ModelClient } from '../workers/modelClient';
import type { RunPickDeps } from './pickRun';
import type { RunRegistry, RunsRoot } from './runStore';

/** What the run commands use. */
export interface RunActionDeps extends RunPickDeps {
  readonly context: Pick<vscode.ExtensionContext, 'storageUri'>;
  readonly log: vscode.LogOutputChannel;
  readonly host: Pick<ExtensionHost, 'fs' | 'pathOf' | 'uriOf' | 'lockIdentity'>;
  readonly lab: LabLoader;
  readonly models: Pick<ModelClient, 'request'>;
  readonly registry: RunRegistry;
  readonly dashboard: Pick<DashboardCalls, 'open' | 'reload'>;
  runsRoot(): RunsRoot;
}

/** "Open Run…": adds a run folder chosen on disk to the runs and opens it in the dashboard. */
export async function openRunCommand(s: RunActionDeps, arg?: unknown): Promise<string | undefined> {
  const { fs } = s.host;
  let dir = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? (s.host.pathOf(arg) ?? undefined) : undefined;
  if (!dir) {
    const picked = await vscode.window.showOpenDialog({
      title: 'Attention Lab: open a run folder (it holds run.json)',
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Open Run',
      ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
    });
    if (!picked?.[0]) return undefined;
    dir = s.host.pathOf(picked[0]) ?? undefined;
    if (!dir) {
      await showError(
        s.log,
        `${shownPath(picked[0].toString(true))} is not on a file system Attention Lab can read ` +
          `here; choose a folder on disk.`,
      );
      return undefined;
    }
  }
  const lab = s.lab.get();
  if (!(await lab.isRunFolder(fs, dir))) {
    await showError(
      s.log,
      `${shownPath(dir)} is not a run folder (it has no run.json). Choose a folder that "Attention ` +
        `Lab: Train" or \`attention-lab train\` created.`,
    );
    return undefined;
  }
  const listing = await lab.readListing(fs, dir);
  if (!listing.ok) {
    await showError(s.log, `Cannot open ${fs.basename(dir)}: ${listing.error}`);
    return undefined;
  }
  const runDir = fs.resolve(dir);
  if (fs.dirname(runDir) !== fs.resolve(s.runsRoot().root)) await s.registry.addOpened(runDir);
  await s.active.set(runDir);
  await s.runs.refresh();
  s.dashboard.open(runDir);
  return runDir;
}

/**
 * "Find Runs in Other Storage…": lists the runs kept in the extension storage of other
 * identities of this workspace (the same folder at another address or port, strayRuns.ts),
 * those of the same folder picked already, and adds the chosen ones as opened runs (they stay
 * where they are). Resolves to the run folders added.
 */
export async function findStrayRunsCommand(s: RunActionDeps): Promise<string[]> {
  const { fs } = s.host;
  const storage = s.context.storageUri ? s.host.pathOf(s.context.storageUri) : null;
  const root = s.runsRoot();
  const here = `This workspace's runs are kept in ${root.root}.`;
  if (!storage) {
    void vscode.window.showInformationMessage(`Runs of other workspaces are found only with a folder open. ${here}`);
    return [];
  }
  const lab = s.lab.get();
  const folder = vscode.workspace.workspaceFile ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  const found = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: 'Attention Lab: looking for runs in other workspace storage',
    },
    () => findStrayRuns(fs, storage, folder ? folder.toString() : null, (d) => lab.isRunFolder(fs, d)),
  );
  const items = found.flatMap((st) =>
    st.runs
      .filter((d) => !s.runs.find(d))
      .map((runDir): vscode.QuickPickItem & { runDir: string } => ({
        label: fs.basename(runDir),
        description: st.sameFolder
          ? 'this folder at another address'
          : `from ${st.folder ?? 'a workspace VS Code did not name'}`,
        detail: runDir,
        picked: st.sameFolder,
        runDir,
      })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      `No runs in other workspace storage beside ${fs.dirname(storage)}. ${here} On vscode.dev, ` +
        `runs trained in another browser or profile stay in that browser's storage.`,
    );
    return [];
  }
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: 'Attention Lab: add runs kept in other workspace storage',
    placeHolder:
      'Runs of this folder opened at another address are checked; they stay where they are and show in the Runs view',
  });
  if (!picked?.length) return [];
  for (const p of picked) await s.registry.addOpened(p.runDir);
  await s.runs.refresh();
  s.log.info(
    `Added ${picked.length} ${picked.length === 1 ? 'run' : 'runs'} from other workspace storage: ` +
      `${picked.map((p) => p.runDir).join(', ')}.`,
  );
  void vscode.window.showInformationMessage(
    `Added ${picked.length} ${picked.length === 1 ? 'run' : 'runs'} to the Runs view; ` +
      `${picked.length === 1 ? 'it stays' : 'they stay'} in the other storage. ${here}`,
  );
  return picked.map((p) => p.runDir);
}

/**
 * Reveals a run's folder: in the Explorer when it is inside the workspace, else in the OS (desktop) or by opening
 * run.json.
 */
export async function revealRunCommand(s: RunActionDeps, arg: unknown): Promise<void> {
  const run = await pickRun(s, arg, { trained: false, purpose: 'reveal' });
  if (!run) return;
  const uri = s.host.uriOf(run.runDir);
  if (vscode.workspace.getWorkspaceFolder(uri)) {
    await vscode.commands.executeCommand('revealInExplorer', uri);
    return;
  }
  if (vscode.env.uiKind === vscode.UIKind.Desktop && vscode.env.remoteName === undefined) {
    await vscode.commands.executeCommand('revealFileInOS', uri);
    return;
  }
  await vscode.window.showTextDocument(s.host.uriOf(s.host.fs.join(run.runDir, 'run.json')), { preview: true });
  void vscode.window.showInformationMessage(`${run.name} is in ${shownPath(run.runDir)}.`);
}

/** The runs a Runs-view command was invoked on: the multi-selection when `arg` is part of it, else none. */
export function selectedRuns(s: RunActionDeps, arg: unknown, selection: unknown): RunItem[] {
  const named = runDirOf(s, arg);
  if (!named || !Array.isArray(selection) || selection.length < 2) return [];
  const dirs = selection.map((x) => runDirOf(s, x)).filter((d): d is string => d !== null);
  if (!dirs.includes(named)) return [];
  return dirs.map((d) => s.runs.find(d)).filter((r): r is RunItem => r !== undefined);
}

/**
 * Deletes one run folder, or every run selected in the Runs view (`selection`), after one
 * modal confirmation that names how many. Runs that are training are left alone, and said so.
 */
export async function deleteRunCommand(s: RunActionDeps, arg: unknown, selection?: unknown): Promise<boolean> {
  let runs = selectedRuns(s, arg, selection);
  if (runs.length === 0) {
    const run = await pickRunToChange(s, arg, 'delete');
    if (!run) return false;
    runs = [run];
  }
  const training = runs.filter((r) => r.active);
  runs = runs.filter((r) => !r.active);
  // A run another window or the command line trains holds its folder's lock: it is left alone too.
  const locked = new Map<RunItem, string>();
  for (const r of runs) {
    const problem = await runLockProblem(s.host.fs, r.runDir, s.host.lockIdentity);
    if (problem) locked.set(r, problem);
  }
  runs = runs.filter((r) => !locked.has(r));
  const trainingHere =
    training.length > 0
      ? `${training.map((r) => r.name).join(', ')} ${training.length === 1 ? 'is' : 'are'} ` +
        `training; stop it before deleting it.`
      : '';
  if (runs.length === 0) {
    void vscode.window.showWarningMessage([trainingHere, ...locked.values()].filter(Boolean).join(' '));
    return false;
  }
  const one = runs.length === 1 ? (runs[0] as RunItem) : null;
  const keptNames = [...training, ...locked.keys()].map((r) => r.name);
  const kept =
    keptNames.length > 0
      ? ` ${keptNames.join(', ')} ${keptNames.length === 1 ? 'is' : 'are'} training and will be kept.`
      : '';
  const answer = await vscode.window.showWarningMessage(
    one ? `Delete ${one.name}?` : `Delete ${runs.length} runs?`,
    {
      modal: true,
      detail: one
        ? `This removes ${shownPath(one.runDir)} and everything in it (model, checkpoints, metrics, ` +
          `snapshots). It cannot be undone.${kept}`
        : `This removes the folders of ${runs.map((r) => r.name).join(', ')} and everything in them ` +
          `(models, checkpoints, metrics, snapshots). It cannot be undone.${kept}`,
    },
    'Delete',
  );
  if (answer !== 'Delete') return false;
  let deleted = 0;
  for (const run of runs) {
    // Checked again: a session may have started training it while the question was open.
    const problem = await runLockProblem(s.host.fs, run.runDir, s.host.lockIdentity);
    if (problem) {
      void vscode.window.showWarningMessage(problem);
      continue;
    }
    try {
      await s.host.fs.remove(run.runDir);
      deleted++;
    } catch (e) {
      await showError(s.log, `Could not delete ${shownPath(run.runDir)}: ${messageOf(e)}`, e);
      continue;
    }
    await s.registry.removeOpened(run.runDir);
    if (s.active.id() === run.runDir) await s.active.set(null);
    s.log.info(`Deleted ${run.runDir}.`);
  }
  await s.runs.refresh();
  s.dashboard.reload();
  return deleted === runs.length;
}

/**
 * Renames a run: a display name kept in run.json. The folder keeps its name — it is the
 * run's id for the editor's state (the active run, opened runs, the dashboard), for the
 * command line and for a worker that may be writing into it right now, so renaming it is
 * not safe while anything holds it. An empty name goes back to the folder's name.
 */
export async function renameRunCommand(s: RunActionDeps, arg: unknown, nameArg?: string): Promise<string | undefined> {
  const run = await pickRunToChange(s, arg, 'rename');
  if (!run) return undefined;
  const lab = s.lab.get();
  const name =
    typeof nameArg === 'string'
      ? nameArg
      : await vscode.window.showInputBox({
          title: `Attention Lab: rename ${run.name}`,
          prompt:
            `The name the Runs view, the dashboard and the status bar show (the folder ` +
            `${s.host.fs.basename(run.runDir)} keeps its name). Empty: the folder's name.`,
          value: run.name,
          valueSelection: [0, run.name.length],
          validateInput: (v) => lab.runNameProblem(v),
          ignoreFocusOut: true,
        });
  if (name === undefined) return undefined;
  try {
    await lab.setRunLabel(s.host.fs, run.runDir, { displayName: name });
  } catch (e) {
    await showError(s.log, `Could not rename ${run.name}: ${messageOf(e)}`, e);
    return undefined;
  }
  const shown = name.trim() || s.host.fs.basename(run.runDir);
  s.log.info(`Renamed ${run.runDir} to "${shown}".`);
  await s.runs.refresh();
  s.dashboard.reload();
  return shown;
}

/** Adds, edits or (empty) removes a run's note, shown in the Runs view's tooltip and the dashboard header. */
export async function editRunNoteCommand(
  s: RunActionDeps,
  arg: unknown,
  noteArg?: string,
): Promise<string | undefined> {
  const run = await pickRunToChange(s, arg, 'annotate');
  if (!run) return undefined;
  const note =
    typeof noteArg === 'string'
      ? noteArg
      : await vscode.window.showInputBox({
          title: `Attention Lab: note on ${run.name}`,
          prompt:
            'What this run tries or found (shown in the Runs view tooltip and the dashboard ' +
            'header). Empty removes the note.',
          value: run.note ?? '',
          ignoreFocusOut: true,
        });
  if (note === undefined) return undefined;
  try {
    await s.lab.get().setRunLabel(s.host.fs, run.runDir, { note });
  } catch (e) {
    await showError(s.log, `Could not save the note on ${run.name}: ${messageOf(e)}`, e);
    return undefined;
  }
  await s.runs.refresh();
  s.dashboard.reload();
  return note.trim();
}

/** The layouts an export writes: ours under nanoGPT's / the notebook's names, or Hugging Face's Llama. */
export type ExportFormatChoice = 'pytorch' | 'hf';

/**
 * Exports a run's model into a folder the user picks (or `outDir`): for PyTorch, or (decoder-only, asked when no
 * `outDir` or `format` is given) in Hugging Face's LlamaForCausalLM layout, which the model worker refuses in one
 * line for a model Llama cannot express.
 */
export async function exportRunCommand(
  s: RunActionDeps,
  arg: unknown,
  outDir?: string,
  formatGiven?: ExportFormatChoice,
): Promise<string[] | undefined> {
  const run = await pickRun(s, arg, { trained: true, purpose: 'export' });
  if (!run) return undefined;
  const { fs } = s.host;
  let format: ExportFormatChoice = formatGiven ?? 'pytorch';
  if (!formatGiven && !outDir && run.kind === 'decoder-only') {
    const choice = await vscode.window.showQuickPick(
      [
        {
          label: 'PyTorch',
          description: "nanoGPT's names, Attention Lab's model in reference.py",
          format: 'pytorch' as const,
        },
        {
          label: 'Hugging Face Llama',
          description: "transformers' LlamaForCausalLM (RMSNorm, SwiGLU, RoPE models only)",
          format: 'hf' as const,
        },
      ],
      { title: `Attention Lab: export ${run.name} as…` },
    );
    if (!choice) return undefined;
    format = choice.format;
  }
  const forWhom = format === 'hf' ? "Hugging Face's LlamaForCausalLM" : 'PyTorch';
  let out = outDir;
  if (!out) {
    const picked = await vscode.window.showOpenDialog({
      title: `Attention Lab: export ${run.name} for ${forWhom} into…`,
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Export Here',
      ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
    });
    if (!picked?.[0]) return undefined;
    out = s.host.pathOf(picked[0]) ?? undefined;
    if (!out) {
      await showError(
        s.log,
        `${shownPath(picked[0].toString(true))} is not on a file system Attention Lab can write ` +
          `here; choose a folder on disk.`,
      );
      return undefined;
    }
  }
  const target = fs.join(out, folderNameOf(run.name, fs.basename(run.runDir)));
  let force = false;
  if ((await listNames(fs, target)).length > 0) {
    const replace = await vscode.window.showWarningMessage(
      `${shownPath(target)} already exists and is not empty. Replace it with this export?`,
      { modal: true },
      'Replace',
    );
    if (replace !== 'Replace') return undefined;
    force = true;
  }
  let result;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Attention Lab: exporting ${run.name}` },
      () => s.models.request('export', { runDir: run.runDir, outDir: out as string, force, format }),
    );
  } catch (e) {
    await showError(s.log, `Export of ${run.name} failed: ${messageOf(e)}`, e);
    return undefined;
  }
  const names =
    format === 'hf'
      ? "LlamaForCausalLM's"
      : run.kind === 'decoder-only'
        ? "nanoGPT's GPT"
        : "the notebook Transformer's";
  const dir = result.dir;
  s.log.info(
    `Exported ${run.name} (${result.tensors} tensors, ${names} names) to ${dir}: ` +
      `${result.files.map((f) => fs.basename(f)).join(', ')}`,
  );
  for (const w of result.warnings) s.log.warn(`Export of ${run.name}: ${w}`);
  const warn = result.warnings.length ? ` Notes: ${result.warnings.join('; ')}.` : '';
  void vscode.window
    .showInformationMessage(
      `Exported ${run.name} for ${forWhom} into ${shownPath(dir)} (weights, config, tokenizer, README).${warn}`,
      'Open README',
    )
    .then((a) => {
      if (a) void vscode.window.showTextDocument(s.host.uriOf(fs.join(dir, 'README.md')));
    });
  return [...result.files];
}
