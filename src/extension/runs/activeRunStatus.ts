/**
 * The active run in the status bar: "$(star-full) name · kind · step N" with a tooltip of its
 * state, backend and note; clicking it opens a quick pick of the runs that makes the picked
 * one active ("Attention Lab: Pick Active Run…"). Hidden while there are no runs.
 *
 * Leaves out: what the active run is (activeRun.ts).
 */

import * as vscode from 'vscode';
import type { ActiveRun } from './activeRun';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { activeRunText, activeRunTooltip } from './runLines';
import { runPickItems } from './pickRun';
import type { RunsModel } from './runsModel';

const REDRAW_MS = 250;

/** The active run's status-bar item. */
export class ActiveRunStatusBar implements DisposableLike {
  private readonly store = new DisposableStore();
  private readonly item: vscode.StatusBarItem;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly active: ActiveRun,
    private readonly runs: RunsModel,
    pickCommand: string,
  ) {
    this.item = this.store.add(
      vscode.window.createStatusBarItem('attentionLab.activeRun', vscode.StatusBarAlignment.Left, 49),
    );
    this.item.name = 'Attention Lab Active Run';
    this.item.command = { command: pickCommand, title: 'Pick Active Run' };
    this.store.add(active.onDidChange(() => this.draw()));
    // The runs change with every training step: redraw a few times a second at most.
    this.store.add(runs.onDidChange(() => (this.timer ??= setTimeout(() => this.draw(), REDRAW_MS))));
    this.store.add({ dispose: () => this.timer && clearTimeout(this.timer) });
  }

  private draw(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const items = this.runs.isLoaded ? this.runs.items() : [];
    if (items.length === 0) {
      this.item.hide();
      return;
    }
    const r = this.active.get();
    this.item.text = activeRunText(r);
    this.item.tooltip = activeRunTooltip(r);
    this.item.show();
  }

  dispose(): void {
    this.store.dispose();
  }
}

/** "Pick Active Run…": a quick pick of every readable run; the picked one becomes active. Resolves to its folder. */
export async function pickActiveRunCommand(active: ActiveRun, runs: RunsModel): Promise<string | undefined> {
  const items = (runs.isLoaded ? runs.items() : await runs.refresh()).filter((r) => r.error === null);
  if (items.length === 0) {
    void vscode.window.showInformationMessage('There are no runs yet: train one first (Attention Lab: Train).');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(runPickItems(items, active.id()), {
    title: 'Attention Lab: Active Run',
    placeHolder: 'The run that Score Selection, Show Attention, Decode and Export use',
  });
  if (!picked) return undefined;
  await active.set(picked.run.runDir);
  return picked.run.runDir;
}
