/**
 * The PyTorch engine as the extension runs it: which Python (attentionLab.pytorch.python when
 * set, else the interpreter the Python extension has selected for the workspace, else
 * python3 on PATH), the shipped trainer (dist/pytorch/ in the extension), the session's
 * options from the settings, and what that Python's torch offers (probed in a child process,
 * never on the host's thread), for Configure's review and Train.
 *
 * Desktop only: VS Code in the browser has no processes to start ({@link NO_PYTORCH_HERE}).
 *
 * Leaves out: the training itself (the training worker hosts the PyTorch session) and the
 * Configure UI (configure/engineChoice.ts).
 */

import * as vscode from 'vscode';
import type { PytorchOptions, TrainSpec } from '../../protocol/data';
import type { Settings } from '../base/settings';
import { pytorchOptionsOf } from '../base/settings';
import type { ExtensionHost } from '../host/extensionHost';

/** What the PyTorch engine's checks read: where the extension is installed, and the host's PyTorch side. */
export interface PytorchDeps {
  readonly context: Pick<vscode.ExtensionContext, 'extensionUri'>;
  readonly host: Pick<ExtensionHost, 'pytorch'>;
}

/** Why the PyTorch engine is not offered on this host (VS Code in the browser), in one line. */
export const NO_PYTORCH_HERE =
  'The PyTorch engine needs desktop VS Code (it starts Python processes, which VS Code in the ' +
  'browser cannot); set attentionLab.training.engine to builtin to train here.';

/** The Python the engine uses, and where that choice came from. */
export interface PythonChoice {
  readonly python: string;
  readonly from: 'setting' | 'the Python extension' | 'PATH';
}

/** The parts of the Python extension's API read here (its `environments` API, else the older `settings` one). */
interface PythonApi {
  readonly environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { readonly path: string };
    resolveEnvironment(env: {
      readonly path: string;
    }): Promise<{ readonly executable?: { readonly uri?: vscode.Uri } } | undefined>;
  };
  readonly settings?: { getExecutionDetails(resource?: vscode.Uri): { readonly execCommand?: readonly string[] } };
}

/** The interpreter the Python extension has selected for `resource`, or null (not installed, or none selected). */
async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | null> {
  const ext = vscode.extensions.getExtension<PythonApi>('ms-python.python');
  if (!ext) return null;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    if (api.environments) {
      const env = await api.environments.resolveEnvironment(api.environments.getActiveEnvironmentPath(resource));
      const exe = env?.executable?.uri?.fsPath;
      if (exe) return exe;
    }
    return api.settings?.getExecutionDetails(resource).execCommand?.[0] ?? null;
  } catch {
    return null; // an extension that fails to answer is as good as none: fall back to PATH
  }
}

/** The Python of the PyTorch engine for these settings. */
export async function choosePython(settings: Settings): Promise<PythonChoice> {
  const set = settings.pytorch.python.trim();
  if (set) return { python: set, from: 'setting' };
  const fromExt = await pythonExtensionInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri);
  return fromExt ? { python: fromExt, from: 'the Python extension' } : { python: 'python3', from: 'PATH' };
}

/** The trainer that ships in the extension. */
export function trainerDir(s: Pick<PytorchDeps, 'context'>): string {
  return vscode.Uri.joinPath(s.context.extensionUri, 'dist', 'pytorch').fsPath;
}

/** The PyTorch session options of the settings (null: our engine trains), with the Python chosen. */
export async function pytorchOptions(
  s: PytorchDeps,
  settings: Settings,
): Promise<{ options: PytorchOptions; python: PythonChoice } | null> {
  if (settings.training.engine !== 'pytorch') return null;
  const python = await choosePython(settings);
  const options = pytorchOptionsOf(settings, python.python, trainerDir(s));
  return options ? { options, python } : null;
}

/**
 * One line on what the chosen Python's torch offers ("torch 2.3.1 (Python 3.12.1) · CUDA: 2 ×
 * NVIDIA H100 (bf16) · python3 from PATH"), or the one-line reason it cannot train (no Python,
 * no torch, an old torch, a device it lacks, a batch the processes cannot share).
 */
export async function torchSummary(
  s: PytorchDeps,
  settings: Settings,
  spec: TrainSpec,
): Promise<{ ok: boolean; line: string }> {
  const chosen = await pytorchOptions(s, settings);
  if (!chosen) return { ok: true, line: '' };
  if (!s.host.pytorch) return { ok: false, line: NO_PYTORCH_HERE };
  const lab = s.host.pytorch();
  const where = `${chosen.python.python} from ${chosen.python.from}`;
  try {
    const env = await lab.probeTorch(chosen.options.python, chosen.options.trainerDir);
    lab.checkOptions(env, chosen.options);
    const share = lab.batchShareProblem(spec, chosen.options.nproc);
    if (share) return { ok: false, line: share };
    return { ok: true, line: `${lab.describeEnv(env)} · ${where}` };
  } catch (e) {
    return { ok: false, line: `${e instanceof Error ? e.message : String(e)} (${where})` };
  }
}
