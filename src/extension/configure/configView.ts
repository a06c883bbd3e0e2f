/**
 * The sidebar's Configuration view: what the next Train will use — model kind and preset,
 * the architecture they make, data source, tokenizer, training length and optimizer, where runs are kept — and the
 * model's size (parameters, memory) planned from those settings. Each line opens the
 * matching settings; the view's title button runs "Configure Model…". Refreshes when an
 * `attentionLab.*` setting changes.
 *
 * Leaves out: editing (configure.ts) and the time per step (measured only on request,
 * in the configure flow, since it runs the model).
 */

import * as vscode from 'vscode';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { draftFromSettings, draftSize, estimateSpecOf, ownTokenizer } from './configureDraft';
import { architectureView } from './architectureChoice';
import type { Settings } from '../base/settings';
import { mismatch } from '../base/settings';
import type { LabLoader } from '../host/labLoader';
import type { RunsRoot } from '../runs/runStore';

/** What the Configuration view reads: the settings now, the lab's size estimate, where runs go. */
export interface ConfigViewDeps {
  readonly lab: LabLoader;
  settings(): Settings;
  runsRoot(): RunsRoot;
}

/** One line of the view. */
export interface ConfigLine {
  readonly label: string;
  readonly value: string;
  /** Settings search the line opens. */
  readonly query: string;
  readonly icon: string;
  readonly problem?: boolean;
}

/** The lines for some settings (the size line is added by the view). */
export function configLines(s: Settings, runsWhere: string): ConfigLine[] {
  const d = s.data;
  const data =
    d.source === 'task'
      ? `task ${d.task}`
      : d.source === 'pairs'
        ? `pairs ${d.pairsSource || '(not set)'}${d.pairsTarget ? ` → ${d.pairsTarget}` : ''}`
        : `documents ${d.include}${d.exclude ? ` minus ${d.exclude}` : ''}`;
  // Steps and context as Train resolves them (a setting at 0 takes the data's default, e.g. a task's own run).
  const draft = draftFromSettings(s);
  const t = estimateSpecOf(s, draft).training;
  const lines: ConfigLine[] = [
    {
      label: 'Model',
      value: `${s.model.kind} · ${s.model.preset}${
        Object.keys(s.model.overrides).length
          ? ` · ${Object.entries(s.model.overrides)
              .map(([k, v]) => `${k}=${String(v)}`)
              .join(', ')}`
          : ''
      }`,
      query: 'attentionLab.model',
      icon: 'circuit-board',
    },
    { label: 'Data', value: data, query: 'attentionLab.data', icon: 'files' },
    {
      label: 'Tokenizer',
      value: ownTokenizer(draft)
        ? "characters (the task's own letters)"
        : s.tokenizer.type === 'bpe'
          ? `byte-level BPE · ${s.tokenizer.vocabSize}`
          : 'characters',
      query: 'attentionLab.tokenizer',
      icon: 'symbol-text',
    },
    {
      label: 'Training',
      value:
        `${t.steps} steps · batch ${t.batchSize} · context ${t.seqLen} · ` +
        (t.optimizer === 'paper'
          ? "Adam + the paper's warm-up"
          : `${t.optimizer === 'muon' ? 'Muon + AdamW' : 'AdamW'} + ` +
            `${t.schedule === 'wsd' ? 'warmup–stable–decay' : 'cosine'}`),
      query: 'attentionLab.training',
      icon: 'pulse',
    },
    { label: 'Runs', value: runsWhere, query: 'attentionLab.runs', icon: 'folder' },
  ];
  const wrong = mismatch(s);
  if (wrong)
    lines.unshift({ label: 'Problem', value: wrong, query: 'attentionLab.model', icon: 'warning', problem: true });
  return lines;
}

/** Tree data provider of the Configuration view. */
export class ConfigView implements vscode.TreeDataProvider<ConfigLine>, DisposableLike {
  private readonly store = new DisposableStore();
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly s: ConfigViewDeps) {
    this.store.add(this.changed);
    this.store.add(
      vscode.workspace.onDidChangeConfiguration(
        (e) => e.affectsConfiguration('attentionLab') && this.changed.fire(undefined),
      ),
    );
    this.store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => this.changed.fire(undefined)));
  }

  getChildren(element?: ConfigLine): ConfigLine[] {
    if (element) return [];
    const settings = this.s.settings();
    const root = this.s.runsRoot();
    const lines = configLines(
      settings,
      root.where === 'workspace' ? `workspace · ${vscode.workspace.asRelativePath(root.root)}` : 'extension storage',
    );
    if (!vscode.workspace.isTrusted && settings.data.source !== 'task') {
      lines.unshift({
        label: 'Restricted Mode',
        value: 'only built-in tasks train here; choose one in Configure Model…',
        query: 'attentionLab.data',
        icon: 'shield',
        problem: true,
      });
    }
    // The same size line Configure's preset list and review show.
    const sized = draftSize(settings, draftFromSettings(settings), (spec, chars) =>
      this.s.lab.get().estimateSpec(spec, chars),
    );
    const size: ConfigLine = sized.ok
      ? { label: 'Size', value: sized.line, query: 'attentionLab.model', icon: 'dashboard' }
      : { label: 'Size', value: sized.error, query: 'attentionLab.model', icon: 'warning', problem: true };
    // The architecture the preset and the overrides make ("RoPE θ 10000 · RMSNorm · SwiGLU · …"), when it is valid.
    const arch = architectureView(settings, draftFromSettings(settings), (spec, chars) =>
      this.s.lab.get().estimateSpec(spec, chars),
    ).line;
    const archLine: ConfigLine[] = arch
      ? [{ label: 'Architecture', value: arch, query: 'attentionLab.model', icon: 'symbol-structure' }]
      : [];
    return [...lines, ...archLine, size];
  }

  getTreeItem(line: ConfigLine): vscode.TreeItem {
    const item = new vscode.TreeItem(line.label, vscode.TreeItemCollapsibleState.None);
    item.description = line.value;
    item.tooltip = `${line.label}: ${line.value}\n\nClick to open the ${line.query}.* settings.`;
    item.iconPath = new vscode.ThemeIcon(
      line.icon,
      line.problem ? new vscode.ThemeColor('problemsWarningIcon.foreground') : undefined,
    );
    item.command = { command: 'workbench.action.openSettings', title: 'Open Settings', arguments: [line.query] };
    return item;
  }

  dispose(): void {
    this.store.dispose();
  }
}
