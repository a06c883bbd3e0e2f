/**
 * Which run a command acts on: the one it was invoked on (a Runs tree item or a run folder
 * path), else the active run (activeRun.ts), else the only suitable one; when the active run
 * does not suit the command, or there is none and several would, a quick pick ("Decode
 * with…") that says why and makes the picked run the active one. Commands
 * that need a trained model only ever get a run with a checkpoint; a command may narrow the
 * runs further (`only`, e.g. the runs that can continue training) and say why a run is not one.
 * A command that renames, annotates or deletes a run never assumes one: given no run, it asks
 * ({@link pickRunToChange}).
 *
 * Leaves out: what the command then does with the run.
 */

import * as vscode from 'vscode';
import { runChoiceDescription } from './runLines';
import type { RunItem, RunsModel } from './runsModel';
import type { ExtensionHost } from '../host/extensionHost';
import type { ActiveRun } from './activeRun';

/** What picking a run uses: the host's paths, the runs, and the active run. */
export interface RunPickDeps {
  readonly host: Pick<ExtensionHost, 'fs' | 'pathOf'>;
  readonly runs: RunsModel;
  readonly active: ActiveRun;
}

/** A command argument naming a run: a tree item, a folder path or a URI. */
export type RunArg = RunItem | string | vscode.Uri | undefined;

/** The run folder an argument names (in `s.host`'s paths), or null. */
export function runDirOf(s: Pick<RunPickDeps, 'host'>, arg: unknown): string | null {
  if (typeof arg === 'string') return s.host.fs.resolve(arg);
  if (arg instanceof vscode.Uri) return s.host.pathOf(arg);
  if (typeof arg === 'object' && arg !== null && typeof (arg as { runDir?: unknown }).runDir === 'string')
    return (arg as RunItem).runDir;
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
export async function pickRun(
  s: RunPickDeps,
  arg: unknown,
  opts: { readonly trained: boolean; readonly purpose: string; readonly only?: RunFilter },
): Promise<RunItem | undefined> {
  const items = s.runs.isLoaded ? s.runs.items() : await s.runs.refresh();
  const usable = (r: RunItem): boolean => r.error === null && (!opts.trained || r.hasModel);
  const ok = (r: RunItem): boolean => usable(r) && (opts.only?.accept(r) ?? true);
  const named = runDirOf(s, arg);
  if (named) {
    const r = s.runs.find(named);
    if (r && ok(r)) return r;
    const why = !r
      ? `${named} is not one of the known runs; use "Attention Lab: Open Run…" first.`
      : usable(r) && opts.only
        ? opts.only.why(r)
        : `${r.name} has no trained model yet; train it for a few steps first.`;
    void vscode.window.showWarningMessage(why);
    return undefined;
  }
  const candidates = items.filter(ok);
  if (candidates.length === 0 && opts.only && items.some(usable)) {
    void vscode.window.showInformationMessage(opts.only.none);
    return undefined;
  }
  if (candidates.length === 0) {
    const msg = opts.trained
      ? `No run has a trained model yet, so there is nothing to ${opts.purpose} with. Train one first.`
      : 'There are no runs yet.';
    const a = await vscode.window.showInformationMessage(msg, 'Train', 'Open Run…');
    if (a === 'Train') await vscode.commands.executeCommand('attentionLab.train');
    if (a === 'Open Run…') await vscode.commands.executeCommand('attentionLab.openRun');
    return undefined;
  }
  const active = s.active.get();
  if (active && ok(active)) return active;
  if (!active && candidates.length === 1) {
    await s.active.set((candidates[0] as RunItem).runDir);
    return candidates[0];
  }
  const why = !active
    ? null
    : !usable(active)
      ? active.error !== null
        ? `it cannot be read (${active.error})`
        : 'it has no trained model yet'
      : (opts.only?.why(active) ?? '');
  const placeHolder = active
    ? `The active run, ${active.name}, cannot be used: ${why}${/[.!?]$/.test(why ?? '') ? '' : '.'} ` +
      `Pick another (it becomes the active run).`
    : 'No run is active: pick the run to use (it becomes the active run; change it in the Runs view ' +
      'or the status bar).';
  return askForRun(s, candidates, opts.purpose, placeHolder);
}

/**
 * The run a renaming, annotating or deleting command acts on: the one it was invoked on (a Runs
 * view row), else the one the user picks now — never the active run by default, so a command
 * that lost its row on the way (or came from the palette) cannot change another run unasked.
 * The pick does not change the active run. Undefined: cancelled, or there is none (they were told).
 */
export async function pickRunToChange(s: RunPickDeps, arg: unknown, purpose: string): Promise<RunItem | undefined> {
  if (runDirOf(s, arg) !== null) return pickRun(s, arg, { trained: false, purpose });
  const items = s.runs.isLoaded ? s.runs.items() : await s.runs.refresh();
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`There are no runs to ${purpose}.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(runPickItems(items, s.active.id()), {
    title: `Attention Lab: ${purpose.charAt(0).toUpperCase()}${purpose.slice(1)} which run?`,
    placeHolder: `Pick the run to ${purpose}; the active run stays as it is`,
  });
  return picked ? s.runs.find(picked.run.runDir) : undefined;
}

/** The "… with…" quick pick over `candidates`; the picked run becomes the active run. */
export async function askForRun(
  s: RunPickDeps,
  candidates: readonly RunItem[],
  purpose: string,
  placeHolder: string,
): Promise<RunItem | undefined> {
  const picked = await vscode.window.showQuickPick(runPickItems(candidates, s.active.id()), {
    title: `Attention Lab: ${purpose.charAt(0).toUpperCase()}${purpose.slice(1)} with…`,
    placeHolder,
  });
  if (picked) await s.active.set(picked.run.runDir);
  return picked?.run;
}

/** Quick-pick items of `runs`, the active one starred. */
export function runPickItems(
  runs: readonly RunItem[],
  activeId: string | null,
): (vscode.QuickPickItem & { readonly run: RunItem })[] {
  return runs.map((r) => ({
    label: `${r.runDir === activeId ? '$(star-full) ' : ''}${r.name}`,
    description: runChoiceDescription(r),
    detail: r.note ?? r.data?.description ?? r.runDir,
    run: r,
  }));
}
