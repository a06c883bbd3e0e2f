/**
 * The engine on Configure's review: one row says which engine will train (ours, or PyTorch
 * with its processes and device) and, for PyTorch, what the chosen Python's torch offers —
 * version, GPUs, bf16 — or that it cannot train, probed before anything runs. Choosing the row
 * opens the engine list: ours, then the PyTorch layouts this machine can run (one process;
 * two on the CPU; one per GPU where torch sees more than one), then "Choose the Python…"
 * with the probe's whole line. A layout the chosen Python cannot train opens that choice
 * too: the Python extension's interpreter picker, a file, or a typed command, saved in
 * attentionLab.pytorch.python. Rows stay one short line (a truncated line opens a hover
 * over the row below it); the long line sits on the list's last row.
 *
 * Leaves out: the Python and the probe themselves (training/pytorchEngine.ts) and the rest of
 * the review (configure.ts).
 */

import * as vscode from 'vscode';
import type { Draft } from './configureDraft';
import { applyDraft, engineText, estimateSpecOf } from './configureDraft';
import type { Settings } from '../base/settings';
import type { Back, StepOptions, ValueItem } from './quickInput';
import { BACK, pickStep } from './quickInput';
import { choosePython, torchSummary } from '../training/pytorchEngine';
import type { PytorchDeps } from '../training/pytorchEngine';

/** What choosing the engine uses: the PyTorch checks, the settings now, and the log. */
export interface EngineChoiceDeps extends PytorchDeps {
  readonly log: vscode.LogOutputChannel;
  settings(): Settings;
}

/** A PyTorch layout the list offers. */
type Layout = Pick<Draft, 'engine' | 'processes' | 'device'>;

/** What the chosen PyTorch offers, in one line, for the draft (null for our engine). */
export function torchLine(
  s: EngineChoiceDeps,
  base: Settings,
  d: Draft,
): Promise<{ ok: boolean; line: string }> | null {
  if (d.engine !== 'pytorch') return null;
  return torchSummary(s, applyDraft(base, d), estimateSpecOf(base, d));
}

/** The probe's line shortened for a row: torch's version and device when it can train, else that it cannot. */
export function shortTorchLine(probe: { readonly ok: boolean; readonly line: string }): string {
  if (probe.ok) return probe.line.split(' · ').slice(0, 2).join(' · ');
  return '$(warning) cannot train with the chosen Python — choose… says why and picks another';
}

/** The review's engine row (its detail is the probe's short line once it is known). */
export function engineRow<V>(
  d: Draft,
  value: V,
  probe: { readonly ok: boolean; readonly line: string } | 'probing' | null,
): ValueItem<V> {
  const detail = probe === null ? null : probe === 'probing' ? 'Looking for torch…' : shortTorchLine(probe);
  return {
    label: `$(server-process) Engine: ${engineText(d)}`,
    value,
    description: 'change…',
    ...(detail !== null ? { detail } : {}),
  };
}

/** What the engine list resolves to: a layout, or choosing the Python. */
type EngineValue = Layout | 'python';

/** The engine list; resolves to the draft with the engine chosen, BACK, or undefined (cancelled). */
export async function pickEngine(
  s: EngineChoiceDeps,
  base: Settings,
  d: Draft,
  step: StepOptions,
): Promise<Draft | Back | undefined> {
  for (let settings = base; ; settings = s.settings()) {
    const r = await engineList(s, settings, d, step);
    if (r !== 'python') return r;
    await askForPython(s); // then the list again, probing the Python chosen
  }
}

async function engineList(
  s: EngineChoiceDeps,
  base: Settings,
  d: Draft,
  step: StepOptions,
): Promise<Draft | Back | 'python' | undefined> {
  const probe = torchSummary(
    s,
    applyDraft(base, { ...d, engine: 'pytorch', processes: 1, device: 'auto' }),
    estimateSpecOf(base, d),
  );
  const layouts: Layout[] = [
    { engine: 'pytorch', processes: 1, device: 'auto' },
    { engine: 'pytorch', processes: 2, device: 'cpu' },
  ];
  const gpus = probe.then((p) => Number(/CUDA: (\d+) ×/.exec(p.line)?.[1] ?? 0));
  const ours: ValueItem<EngineValue> = {
    label: "builtin — ours: WebAssembly on this machine's CPU",
    value: { engine: 'builtin', processes: d.processes, device: d.device },
    description: 'in a worker thread',
  };
  const items = (p: { ok: boolean; line: string } | null, n: number): ValueItem<EngineValue>[] => [
    ours,
    ...[...layouts, ...(n > 1 ? [{ engine: 'pytorch' as const, processes: n, device: 'cuda' as const }] : [])].map(
      (l): ValueItem<EngineValue> => ({
        label: `PyTorch — ${engineText(l).replace(/^PyTorch · /, '')}`,
        // A layout the chosen Python cannot train asks for another Python instead of doing nothing.
        value: p === null || p.ok ? l : 'python',
        description:
          p === null || p.ok ? 'torchrun in a child process' : 'needs a Python with torch: Enter chooses one',
      }),
    ),
    { label: 'Python', kind: vscode.QuickPickItemKind.Separator },
    {
      label: '$(folder-opened) Choose the Python for PyTorch…',
      value: 'python',
      description: p === null ? 'looking for torch…' : p.ok ? 'change…' : 'torch not usable',
      detail: p === null ? 'Looking for torch…' : `${p.ok ? '' : '$(warning) '}${p.line}`,
    },
  ];
  const current =
    d.engine === 'builtin' ? ours.value : layouts.find((l) => l.processes === d.processes && l.device === d.device);
  const r = await pickStep<EngineValue>({
    ...step,
    placeholder: 'Which engine trains the run? (The run folder is the same; a run moves between engines.)',
    items: items(null, 0),
    busy: Promise.all([probe, gpus]).then(([p, n]) => items(p, n)),
    ...(current ? { active: current } : {}),
  });
  return r === undefined || r === BACK || r === 'python' ? r : { ...d, ...r };
}

/** The Python extension's id (its picker is offered when it is installed). */
const PYTHON_EXTENSION = 'ms-python.python';

/**
 * Chooses the PyTorch engine's Python: the Python extension's interpreter picker (and
 * attentionLab.pytorch.python cleared, since it would win over the pick), a file, or a typed
 * path or command, saved in attentionLab.pytorch.python. Resolves once chosen or cancelled.
 */
export async function askForPython(s: EngineChoiceDeps): Promise<void> {
  const now = await choosePython(s.settings());
  const hasExtension = vscode.extensions.getExtension(PYTHON_EXTENSION) !== undefined;
  type Way = 'extension' | 'file' | 'type' | 'clear';
  const ways: (vscode.QuickPickItem & { way: Way })[] = [
    ...(hasExtension
      ? [
          {
            label: '$(list-selection) Select Interpreter…',
            description: "the Python extension's picker",
            way: 'extension' as const,
          },
        ]
      : []),
    {
      label: '$(folder-opened) Browse for a Python…',
      description: 'an interpreter with torch, e.g. in a virtual environment',
      way: 'file',
    },
    {
      label: '$(edit) Type a path or command…',
      description: 'e.g. /usr/bin/python3 or ~/venv/bin/python',
      way: 'type',
    },
    ...(now.from === 'setting'
      ? [
          {
            label: '$(discard) Clear attentionLab.pytorch.python',
            description: hasExtension ? "use the Python extension's interpreter" : 'use python3 on PATH',
            way: 'clear' as const,
          },
        ]
      : []),
  ];
  const picked = await vscode.window.showQuickPick(ways, {
    title: 'Attention Lab: the Python for the PyTorch engine',
    placeHolder: `Now: ${now.python} (from ${now.from}). It needs torch 1.13 or newer.`,
  });
  if (!picked) return;
  const config = vscode.workspace.getConfiguration();
  const target =
    (vscode.workspace.workspaceFolders?.length ?? 0) > 0
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
  const save = async (python: string | undefined): Promise<void> => {
    // Either target may hold the setting; the one written here must be the one read.
    await config.update('attentionLab.pytorch.python', python, target);
    if (python === undefined && target === vscode.ConfigurationTarget.Workspace)
      await config.update('attentionLab.pytorch.python', undefined, vscode.ConfigurationTarget.Global);
    s.log.info(
      python
        ? `The PyTorch engine uses ${python} (attentionLab.pytorch.python).`
        : 'Cleared attentionLab.pytorch.python.',
    );
  };
  if (picked.way === 'clear') return save(undefined);
  if (picked.way === 'extension') {
    await vscode.commands.executeCommand('python.setInterpreter');
    if (now.from === 'setting') await save(undefined);
    return;
  }
  if (picked.way === 'file') {
    const file = await vscode.window.showOpenDialog({
      title: 'Attention Lab: the Python for the PyTorch engine',
      canSelectFiles: true,
      canSelectFolders: false,
      canSelectMany: false,
      openLabel: 'Use This Python',
    });
    if (file?.[0]) await save(file[0].fsPath);
    return;
  }
  const typed = await vscode.window.showInputBox({
    title: 'Attention Lab: the Python for the PyTorch engine',
    prompt: 'A path to a Python with torch, or a command on PATH',
    value: now.from === 'setting' ? now.python : '',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? null : 'Type a path or a command, e.g. python3'),
  });
  if (typed !== undefined) await save(typed.trim());
}
