/**
 * The training status-bar item: step / total, loss and tokens per second while a run
 * trains (a spinning icon; "paused at" and a pause icon when paused), the final step and loss
 * after it ends, until another run becomes the active one; clicking it opens the dashboard. Updates are throttled to a
 * few per
 * second, however fast steps arrive.
 *
 * Leaves out: anything but the one item (progress notifications live in trainCommand.ts).
 */

import * as vscode from 'vscode';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { formatBackend, formatLoss } from '../../common/format';
import { stopsRun } from '../../lab/base/errorCodes';
import type { Event } from '../base/emitter';
import { endedRunStays, trainingStatusText } from '../runs/runLines';
import type { RunEnd, TrainingController, TrainingState } from './trainingController';

const MIN_INTERVAL_MS = 200;

/** The status-bar item of training runs. */
export class TrainingStatusBar implements DisposableLike {
  private readonly store = new DisposableStore();
  private readonly item: vscode.StatusBarItem;
  private pending: TrainingState | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastDraw = 0;
  /** The run whose end the item shows, while it does. */
  private ended: string | null = null;

  /** `activeChanges`: the active run's folder whenever it changes (runs/activeRun.ts). */
  constructor(controller: TrainingController, openCommand: string, activeChanges?: Event<string | null>) {
    this.item = this.store.add(
      vscode.window.createStatusBarItem('attentionLab.status', vscode.StatusBarAlignment.Left, 50),
    );
    this.item.name = 'Attention Lab Training';
    this.item.command = { command: openCommand, title: 'Open Dashboard' };
    this.store.add(controller.onDidChange((s) => s && this.onChange(s)));
    this.store.add(controller.onDidEnd((e) => this.finish(e)));
    if (activeChanges) {
      this.store.add(
        activeChanges((active) => {
          if (this.ended !== null && !endedRunStays(this.ended, active)) {
            this.ended = null;
            this.item.hide();
          }
        }),
      );
    }
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
    this.ended = null;
    this.item.text = trainingStatusText(s);
    this.item.tooltip =
      `${s.name}${s.paused ? ' (paused)' : ''}\n\nstep ${s.step} of ` +
      `${s.totalSteps} · loss ${formatLoss(s.loss)} · best validation ` +
      `${formatLoss(s.bestValLoss)}` +
      `${s.backend ? ` · ${formatBackend(s.backend)}` : ''}\n\nClick to open ` +
      `the dashboard.`;
    this.item.show();
  }

  private finish({ state: s, outcome }: RunEnd): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
    // A full disk or a lost GPU stops a run with its last checkpoint kept (it resumes): stopped, not failed.
    const stopped = outcome.kind === 'failed' && stopsRun(outcome.error.code);
    const failed = outcome.kind === 'failed' && !stopped;
    const how =
      outcome.kind === 'failed'
        ? stopped
          ? outcome.error.code === 'gpu/lost'
            ? 'stopped (GPU lost)'
            : 'stopped (disk full)'
          : 'failed'
        : outcome.reason === 'completed'
          ? 'finished'
          : 'stopped';
    const icon = failed
      ? '$(error)'
      : stopped || (outcome.kind === 'finished' && outcome.reason === 'stopped')
        ? '$(debug-stop)'
        : '$(check)';
    this.ended = s.runDir;
    this.item.text =
      `${icon} Attention Lab: ${how} at step ${outcome.step}/${s.totalSteps} · loss ` + `${formatLoss(s.loss)}`;
    this.item.tooltip =
      outcome.kind === 'failed'
        ? `${s.name} ${how}: ${outcome.error.message}\n\nClick to open the dashboard.`
        : `${s.name} ${how}. Click to open the dashboard.`;
    this.item.show();
  }

  dispose(): void {
    this.store.dispose();
  }
}
