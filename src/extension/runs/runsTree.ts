/**
 * The sidebar's Runs view: one item per run with its status icon, step / total and best
 * validation loss, a tooltip with the model and data, and a `contextValue` that the
 * package.json menus match to offer open, resume, decode, export, reveal and delete.
 * Clicking a run opens it in the dashboard.
 *
 * Leaves out: the data (runsModel.ts) and the actions (runActions.ts).
 */

import * as vscode from 'vscode';
import type { ActiveRun } from './activeRun';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { formatCompact, formatLoss } from '../../common/format';
import { dataLine } from '../base/summaryLines';
import type { RunItem, RunStatus, RunsModel } from './runsModel';
import { contextValueOf } from './runsModel';

const REFRESH_MS = 500;

const ICONS: { readonly [S in RunStatus]: [string, string | undefined] } = {
  created: ['circle-outline', undefined],
  training: ['sync~spin', 'charts.blue'],
  paused: ['debug-pause', 'charts.yellow'],
  completed: ['pass', 'testing.iconPassed'],
  stopped: ['debug-stop', undefined],
  failed: ['error', 'testing.iconFailed'],
  interrupted: ['warning', 'charts.yellow'],
};

/** An imported model that was never trained here: a package, not a stopped run. */
const IMPORTED_ICON: [string, undefined] = ['package', undefined];

/** `text` with Markdown's special characters escaped (a run name is the user's text). */
function escapeMd(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}

/** The item's description: "completed · 60/60 · val 1.234"; "imported · Hugging Face GPT-2 · not trained here". */
export function describeRun(r: RunItem): string {
  if (r.error) return 'unreadable';
  if (r.imported !== null) return `imported · ${r.imported} · not trained here`;
  const val = r.bestValLoss === null ? '' : ` · val ${formatLoss(r.bestValLoss)}`;
  return `${r.status} · ${r.step}/${r.totalSteps}${val}`;
}

/** Tree data provider of the Runs view. */
export class RunsTree implements vscode.TreeDataProvider<RunItem>, DisposableLike {
  private readonly store = new DisposableStore();
  private readonly changed = new vscode.EventEmitter<RunItem | undefined>();
  private timer: NodeJS.Timeout | null = null;
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly model: RunsModel,
    private readonly active: ActiveRun,
  ) {
    this.store.add(this.changed);
    this.store.add(model.onDidChange(() => this.schedule()));
    this.store.add(active.onDidChange(() => this.schedule()));
    this.store.add({ dispose: () => this.timer && clearTimeout(this.timer) });
  }

  /** Redraws at most once a second, however often steps arrive. */
  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.changed.fire(undefined);
    }, REFRESH_MS);
  }

  async getChildren(element?: RunItem): Promise<RunItem[]> {
    if (element) return [];
    return this.model.isLoaded ? this.model.items() : (await this.model.refresh()).slice();
  }

  getTreeItem(r: RunItem): vscode.TreeItem {
    const item = new vscode.TreeItem(r.name, vscode.TreeItemCollapsibleState.None);
    item.id = r.runDir;
    const current = this.active.id() === r.runDir;
    item.description = `${describeRun(r)}${current ? ' · active run' : ''}`;
    item.contextValue = contextValueOf(r, current);
    const [icon, color] = r.imported !== null ? IMPORTED_ICON : ICONS[r.status];
    // The active run wears a star (in its status colour); its status is in the description.
    item.iconPath = new vscode.ThemeIcon(current ? 'star-full' : icon, color ? new vscode.ThemeColor(color) : undefined);
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(`**${escapeMd(r.name)}** — ${r.imported !== null ? `imported (${escapeMd(r.imported)}), not trained here; Fine-tune… trains it` : r.status}${current ? ' · the active run (commands use it)' : ''}\n\n`);
    if (r.note) md.appendText(`${r.note}\n\n`);
    if (r.error) md.appendText(r.error);
    else {
      md.appendMarkdown(`${r.kind ?? 'model'}${r.params !== null ? ` · ${formatCompact(r.params)} parameters` : ''}${r.backend ? ` · ${r.backend} backend` : ''}\n\n`);
      if (r.imported === null) md.appendMarkdown(`step ${r.step} of ${r.totalSteps} · best validation loss ${formatLoss(r.bestValLoss)}\n\n`);
      if (r.data) md.appendText(`${r.data.description} — ${dataLine(r.data)}\n\n`);
      if (r.status === 'interrupted') md.appendMarkdown(`Interrupted (the window reloaded while it trained): resume it from its last checkpoint, step ${r.step}.\n\n`);
    }
    md.appendText(r.runDir);
    item.tooltip = md;
    item.command = { command: 'attentionLab.run.openDashboard', title: 'Open in Dashboard', arguments: [r] };
    return item;
  }

  dispose(): void {
    this.store.dispose();
  }
}
