/**
 * The training status-bar item: step / total, loss and tokens per second while a run
 * trains (a spinning icon; a pause icon when paused), the final step and loss for a while
 * after it ends; clicking it opens the dashboard. Updates are throttled to a few per
 * second, however fast steps arrive.
 *
 * Leaves out: anything but the one item (progress notifications live in trainCommand.ts).
 */

import * as vscode from 'vscode';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { formatBackend, formatCompact, formatLoss } from '../../common/format';
import type { RunEnd, TrainingController, TrainingState } from './trainingController';

const MIN_INTERVAL_MS = 200;

/** The text of the item for a state. */
export function statusText(s: TrainingState): string {
  const icon = s.paused ? '$(debug-pause)' : s.stopping ? '$(loading~spin)' : '$(sync~spin)';
  const rate = s.tokensPerSec > 0 && !s.paused ? ` · ${formatCompact(s.tokensPerSec)} tok/s` : '';
  return `${icon} Attention Lab: step ${s.step}/${s.totalSteps} · loss ${formatLoss(s.loss)}${rate}`;
}

/** The status-bar item of training runs. */
export class TrainingStatusBar implements DisposableLike {
  private readonly store = new DisposableStore();
  private readonly item: vscode.StatusBarItem;
  private pending: TrainingState | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastDraw = 0;

  constructor(controller: TrainingController, openCommand: string) {
    this.item = this.store.add(vscode.window.createStatusBarItem('attentionLab.status', vscode.StatusBarAlignment.Left, 50));
    this.item.name = 'Attention Lab Training';
    this.item.command = { command: openCommand, title: 'Open Dashboard' };
    this.store.add(controller.onDidChange((s) => s && this.onChange(s)));
    this.store.add(controller.onDidEnd((e) => this.finish(e)));
    this.store.add({ dispose: () => this.timer && clearTimeout(this.timer) });
  }

  private onChange(s: TrainingState): void {
    this.pending = s;
    const wait = MIN_INTERVAL_MS - (Date.now() - this.lastDraw);
    if (wait <= 0) this.draw();
    else if (!this.timer) this.timer = setTimeout(() => this.draw(), wait);
  }

  private draw(): void {
    this.timer = null;
    const s = this.pending;
    if (!s) return;
    this.pending = null;
    this.lastDraw = Date.now();
    this.item.text = statusText(s);
    this.item.tooltip = `${s.name}${s.paused ? ' (paused)' : ''}\n\nstep ${s.step} of ${s.totalSteps} · loss ${formatLoss(s.loss)} · best validation ${formatLoss(s.bestValLoss)}${s.backend ? ` · ${formatBackend(s.backend)}` : ''}\n\nClick to open the dashboard.`;
    this.item.show();
  }

  private finish({ state: s, outcome }: RunEnd): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
    // A full disk stops a run with its last checkpoint kept (it resumes): stopped, not failed.
    const diskFull = outcome.kind === 'failed' && outcome.error.code === 'disk/full';
    const failed = outcome.kind === 'failed' && !diskFull;
    const how = outcome.kind === 'failed' ? (diskFull ? 'stopped (disk full)' : 'failed') : outcome.reason === 'completed' ? 'finished' : 'stopped';
    const icon = failed ? '$(error)' : diskFull || (outcome.kind === 'finished' && outcome.reason === 'stopped') ? '$(debug-stop)' : '$(check)';
    this.item.text = `${icon} Attention Lab: ${how} at step ${outcome.step}/${s.totalSteps} · loss ${formatLoss(s.loss)}`;
    this.item.tooltip = outcome.kind === 'failed' ? `${s.name} ${how}: ${outcome.error.message}\n\nClick to open the dashboard.` : `${s.name} ${how}. Click to open the dashboard.`;
    this.item.show();
  }

  dispose(): void {
    this.store.dispose();
  }
}
