/**
 * Which run a command acts on: the one it was invoked on (a Runs tree item or a run folder
 * path), else the selected run, else the only suitable one, else a quick pick. Commands
 * that need a trained model only ever get a run with a checkpoint; a command may narrow the
 * runs further (`only`, e.g. the runs that can continue training) and say why a run is not one.
 *
 * Leaves out: what the command then does with the run.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatLoss } from '../format';
import type { RunItem } from './runsModel';
import type { Services } from './services';

/** A command argument naming a run: a tree item, a folder path or a URI. */
export type RunArg = RunItem | string | vscode.Uri | undefined;

/** The run folder an argument names, or null. */
export function runDirOf(arg: unknown): string | null {
  if (typeof arg === 'string') return path.resolve(arg);
  if (arg instanceof vscode.Uri) return arg.fsPath;
  if (typeof arg === 'object' && arg !== null && typeof (arg as { runDir?: unknown }).runDir === 'string') return (arg as RunItem).runDir;
  return null;
}

/** Which runs a command takes beyond `trained`, and what to say about one it does not. */
export interface RunFilter {
  readonly accept: (r: RunItem) => boolean;
  /** Why `r` (trained, readable, not accepted) cannot be used, and what to do. */
  readonly why: (r: RunItem) => string;
  /** What to say when no run is accepted. */
  readonly none: string;
}

/** Resolves the run for a command; undefined when the user cancelled or there is none (they were told). */
export async function pickRun(s: Services, arg: unknown, opts: { readonly trained: boolean; readonly purpose: string; readonly only?: RunFilter }): Promise<RunItem | undefined> {
  const items = s.runs.isLoaded ? s.runs.items() : s.runs.refresh();
  const usable = (r: RunItem): boolean => r.error === null && (!opts.trained || r.hasModel);
  const ok = (r: RunItem): boolean => usable(r) && (opts.only?.accept(r) ?? true);
  const named = runDirOf(arg);
  if (named) {
    const r = s.runs.find(named);
    if (r && ok(r)) return r;
    const why = !r ? `${named} is not one of the known runs; use "Attention Lab: Open Run…" first.` : usable(r) && opts.only ? opts.only.why(r) : `${r.name} has no trained model yet; train it for a few steps first.`;
    void vscode.window.showWarningMessage(why);
    return undefined;
  }
  const candidates = items.filter(ok);
  if (candidates.length === 0 && opts.only && items.some(usable)) {
    void vscode.window.showInformationMessage(opts.only.none);
    return undefined;
  }
  if (candidates.length === 0) {
    const msg = opts.trained ? `No run has a trained model yet, so there is nothing to ${opts.purpose} with. Train one first.` : 'There are no runs yet.';
    const a = await vscode.window.showInformationMessage(msg, 'Train', 'Open Run…');
    if (a === 'Train') await vscode.commands.executeCommand('attentionLab.train');
    if (a === 'Open Run…') await vscode.commands.executeCommand('attentionLab.openRun');
    return undefined;
  }
  const selected = s.registry.selected();
  const sel = selected ? candidates.find((r) => r.runDir === selected) : undefined;
  if (sel) return sel;
  if (candidates.length === 1) return candidates[0];
  const picked = await vscode.window.showQuickPick(
    candidates.map((r) => ({ label: r.name, description: `${r.status} · ${r.step}/${r.totalSteps} · val ${formatLoss(r.bestValLoss)}`, detail: r.data?.description ?? r.runDir, run: r })),
    { title: `Attention Lab: which run to ${opts.purpose} with?`, placeHolder: 'Runs, newest first' },
  );
  if (picked) await s.registry.select(picked.run.runDir);
  return picked?.run;
}
