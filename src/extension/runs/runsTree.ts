/**
 * The sidebar's Runs view: one item per run with its status icon, step / total and best
 * validation loss, a tooltip with the model and data, and a `contextValue` that the
 * package.json menus match to offer open, resume, decode, export, reveal and delete.
 * Clicking a run opens it in the dashboard.
 *
 * Each run is one element object for the view's lifetime ({@link RunRow}), and a redraw that
 * keeps the same runs in the same order refreshes those elements rather than the whole tree.
 * VS Code hands a row's command its element by looking the row's handle up in a map that a
 * whole-tree refresh empties until the rows are read again; while a run trains the view redraws
 * twice a second, so a Rename or Delete clicked on one row would often arrive with no row at all.
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

/** What a row shows for a run no longer listed (until the list is redrawn without it). */
const GONE: Omit<RunItem, 'runDir' | 'name'> = {
  status: 'stopped',
  note: null,
  backend: null,
  kind: null,
  step: 0,
  totalSteps: 0,
  bestValLoss: null,
  hasModel: false,
  active: false,
  params: null,
  data: null,
  imported: null,
  error: 'This run is no longer listed; refresh the Runs view.',
};

/** The item's description: "completed · 60/60 · val 1.234"; "imported · Hugging Face GPT-2 · not trained here". */
export function describeRun(r: RunItem): string {
  if (r.error) return 'unreadable';
  if (r.imported !== null) return `imported · ${r.imported} · not trained here`;
  const val = r.bestValLoss === null ? '' : ` · val ${formatLoss(r.bestValLoss)}`;
  return `${r.status} · ${r.step}/${r.totalSteps}${val}`;
}

/** A row of the Runs view: the element VS Code hands back to a row's commands (they read `runDir`). */
export interface RunRow {
  readonly runDir: string;
}

/** Tree data provider of the Runs view. */
export class RunsTree implements vscode.TreeDataProvider<RunRow>, DisposableLike {
  private readonly store = new DisposableStore();
  private readonly changed = new vscode.EventEmitter<RunRow | RunRow[] | undefined>();
  private timer: NodeJS.Timeout | null = null;
  /** One element per run folder, kept while the run is listed. */
  private readonly rows = new Map<string, RunRow>();
  /** The run folders VS Code was last given, in order (null: nothing given yet). */
  private shown: string[] | null = null;
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly model: RunsModel,
    private readonly active: ActiveRun,
  ) {
    this.store.add(this.changed);
    // A run added or removed redraws the list at once, so the rows' handles are missing for as
    // short a time as can be; steps redraw the rows in place, at most twice a second.
    this.store.add(model.onDidChange(() => (this.listChanged() ? this.redraw() : this.schedule())));
    this.store.add(active.onDidChange(() => this.schedule()));
    this.store.add({ dispose: () => this.timer && clearTimeout(this.timer) });
  }

  /** Redraws at most twice a second, however often steps arrive. */
  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.redraw();
    }, REFRESH_MS);
  }

  /** The listed runs' folders, in order (null before the first read). */
  private dirs(): string[] | null {
    return this.model.isLoaded ? this.model.items().map((r) => r.runDir) : null;
  }

  /** True when the runs listed differ from those VS Code was last given (or is about to read). */
  private listChanged(): boolean {
    const dirs = this.dirs();
    const shown = this.shown;
    return dirs === null || shown === null || dirs.length !== shown.length || dirs.some((d, i) => d !== shown[i]);
  }

  /** Refreshes the rows in place when the same runs are listed in the same order, else the whole list. */
  private redraw(): void {
    if (this.listChanged()) {
      // VS Code reads this list next; until then, further redraws of the same list stay row refreshes.
      this.shown = this.dirs();
      this.changed.fire(undefined);
      return;
    }
    const rows = (this.shown ?? []).map((d) => this.rows.get(d)).filter((r): r is RunRow => r !== undefined);
    if (rows.length > 0) this.changed.fire(rows);
  }

  /** The element of `runDir`'s row, the same object every time. */
  private rowOf(runDir: string): RunRow {
    let row = this.rows.get(runDir);
    if (!row) this.rows.set(runDir, (row = Object.freeze({ runDir })));
    return row;
  }

  async getChildren(element?: RunRow): Promise<RunRow[]> {
    if (element) return [];
    const items = this.model.isLoaded ? this.model.items() : await this.model.refresh();
    const dirs = items.map((r) => r.runDir);
    for (const d of [...this.rows.keys()]) if (!dirs.includes(d)) this.rows.delete(d);
    this.shown = dirs;
    return dirs.map((d) => this.rowOf(d));
  }

  getTreeItem(row: RunRow): vscode.TreeItem {
    // A row refreshed just as its run went away keeps its folder's name until the list is redrawn.
    const r = this.model.find(row.runDir) ?? {
      ...GONE,
      runDir: row.runDir,
      name: row.runDir.slice(Math.max(row.runDir.lastIndexOf('/'), row.runDir.lastIndexOf('\\')) + 1),
    };
    const item = new vscode.TreeItem(r.name, vscode.TreeItemCollapsibleState.None);
    item.id = r.runDir;
    const current = this.active.id() === r.runDir;
    item.description = `${describeRun(r)}${current ? ' · active run' : ''}`;
    item.contextValue = contextValueOf(r, current);
    const [icon, color] = r.imported !== null ? IMPORTED_ICON : ICONS[r.status];
    // The active run wears a star (in its status colour); its status is in the description.
    item.iconPath = new vscode.ThemeIcon(
      current ? 'star-full' : icon,
      color ? new vscode.ThemeColor(color) : undefined,
    );
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(
      `**${escapeMd(r.name)}** — ` +
        (r.imported !== null
          ? `imported (${escapeMd(r.imported)}), not trained here; Fine-tune… trains it`
          : r.status) +
        `${current ? ' · the active run (commands use it)' : ''}\n\n`,
    );
    if (r.note) md.appendText(`${r.note}\n\n`);
    if (r.error) md.appendText(r.error);
    else {
      md.appendMarkdown(
        `${r.kind ?? 'model'}` +
          `${r.params !== null ? ` · ${formatCompact(r.params)} parameters` : ''}` +
          `${r.backend ? ` · ${r.backend} backend` : ''}\n\n`,
      );
      if (r.imported === null)
        md.appendMarkdown(`step ${r.step} of ${r.totalSteps} · best validation loss ${formatLoss(r.bestValLoss)}\n\n`);
      if (r.data) md.appendText(`${r.data.description} — ${dataLine(r.data)}\n\n`);
      if (r.status === 'interrupted')
        md.appendMarkdown(
          `Interrupted (the window reloaded while it trained): resume it from its last checkpoint, step ${r.step}.\n\n`,
        );
    }
    md.appendText(r.runDir);
    item.tooltip = md;
    item.command = { command: 'attentionLab.run.openDashboard', title: 'Open in Dashboard', arguments: [row] };
    return item;
  }

  dispose(): void {
    this.store.dispose();
  }
}
