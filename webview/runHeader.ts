/**
 * The dashboard header: which run is shown (a picker when there are several), its status —
 * step, progress, best validation loss (an imported model: where it came from, its size and
 * that it was not trained here), the error a failed run stopped with, the worker's last
 * warning — training controls (pause / resume / stop while it trains, Resume for a stopped or
 * interrupted run; only where the host can act on them),
 * and on the standalone page a theme picker (VS Code themes the webview itself).
 *
 * Leaves out: the panels and message handling (app.ts).
 */

import { shownRunState } from '../src/protocol/runStatus';
import type { RunSummary, FromWebview } from '../src/protocol/webview';
import { h, replaceChildren } from './base/dom';
import { formatBackend, formatCompact, formatLoss, formatPercent } from '../src/common/format';
import type { PanelContext } from './panels/panel';

const THEMES = [
  { id: 'auto', label: 'Theme: system', cls: '' },
  { id: 'light', label: 'Theme: light', cls: 'vscode-light' },
  { id: 'dark', label: 'Theme: dark', cls: 'vscode-dark' },
  { id: 'hc', label: 'Theme: high contrast', cls: 'vscode-high-contrast' },
] as const;

/** The header. */
export class RunHeader {
  readonly el: HTMLElement;
  private readonly picker = h('select', { attrs: { id: 'run-picker', 'aria-label': 'Run' } });
  private readonly status = h('span', { className: 'run-status', attrs: { 'aria-live': 'polite' } });
  private readonly controls = h('span', { className: 'run-controls' });
  /** What the run trains on and how validation was held out. */
  private readonly data = h('p', { className: 'run-data', attrs: { id: 'run-data' } });
  /** The user's note on the run. */
  private readonly note = h('p', { className: 'run-note', attrs: { id: 'run-note' } });

  constructor(
    private readonly ctx: PanelContext,
    selected: () => void,
  ) {
    this.picker.addEventListener('change', () => {
      ctx.ui.runId = this.picker.value;
      selected();
      // In the editor the picked run becomes the active run that the commands use.
      const picked = ctx.store.run(this.picker.value);
      if (ctx.host.interactive && picked)
        ctx.host.post({ type: 'dashboard/didSelectRun', runDir: picked.summary.runDir } satisfies FromWebview);
    });
    const theme = ctx.host.kind === 'vscode' ? null : this.themePicker();
    this.el = h(
      'header',
      { className: 'header' },
      h('h1', {}, 'Attention Lab'),
      h('label', { attrs: { for: 'run-picker' }, className: 'visually-hidden' }, 'Run'),
      this.picker,
      this.status,
      this.controls,
      theme,
      this.note,
      this.data,
    );
  }

  private themePicker(): HTMLElement {
    const sel = h(
      'select',
      { attrs: { id: 'theme-picker', 'aria-label': 'Colour theme' } },
      ...THEMES.map((t) => h('option', { attrs: { value: t.id } }, t.label)),
    );
    sel.addEventListener('change', () => {
      const body = document.body.classList;
      for (const t of THEMES) if (t.cls) body.remove(t.cls);
      const cls = THEMES.find((t) => t.id === sel.value)?.cls;
      if (cls) body.add(cls);
    });
    return sel;
  }

  /** Redraws the picker and the status of the selected run. */
  render(): void {
    const runs = this.ctx.store.runs;
    const run = this.ctx.run();
    replaceChildren(
      this.picker,
      ...runs.map((r) =>
        h('option', { attrs: { value: r.id, selected: r.id === run?.id } }, `${r.summary.name} (${r.summary.kind})`),
      ),
    );
    this.picker.disabled = runs.length < 2;
    const d = run?.summary.data;
    this.data.textContent = d ? `${d.description}${d.validation ? ` · validation: ${d.validation.text}` : ''}` : '';
    this.data.hidden = !d;
    this.note.textContent = run?.summary.note ?? '';
    this.note.hidden = !run?.summary.note;
    if (!run) {
      this.status.textContent = this.ctx.store.loaded
        ? 'No runs yet: train one with attention-lab train or the Train command.'
        : 'Waiting for data…';
      replaceChildren(this.controls);
      return;
    }
    const s = run.summary;
    // The rule the Runs view uses too: a live run shows the last step it streamed; any other
    // run its last checkpoint's (an interrupted run resumes there). In the editor the host has
    // applied it already; the report page applies it to what run.json says.
    const isLive = this.ctx.host.interactive && (s.status === 'training' || s.status === 'paused');
    const shown = shownRunState(s, isLive ? { step: run.steps.lastStep, paused: s.status === 'paused' } : null);
    // A start cancelled while its data was read trained nothing: it reads "cancelled", not failed.
    const cancelled = run.failure?.code === 'cancelled';
    const parts = cancelled
      ? [`cancelled before training started (${run.failure?.message ?? ''})`]
      : (importedParts(s, shown.step, isLive) ?? [`${shown.status}`, `step ${shown.step} of ${s.totalSteps}`]);
    if (s.bestValLoss !== null) parts.push(`best validation loss ${formatLoss(s.bestValLoss)}`);
    if (s.model)
      parts.push(
        `${formatBackend(s.model.backend)}` +
          `${s.model.threads ? ` on ${s.model.threads} ${s.model.threads === 1 ? 'thread' : 'threads'}` : ''}` +
          `${s.model.backendChoice ? ` (${s.model.backendChoice})` : ''}`,
      );
    if (s.imported && shown.step > 0) parts.push(`imported from ${s.imported.layout}`);
    if (run.preparing && run.failure === null && s.status !== 'completed') {
      const p = run.preparing;
      parts.push(p.total > 0 ? `${p.message} · ${formatPercent(p.done / p.total)}` : p.message);
    }
    if (run.failure && !cancelled)
      parts.push(
        run.failure.code === 'disk/full' || run.failure.code === 'gpu/lost'
          ? run.failure.message
          : `failed: ${run.failure.message}`,
      );
    else if (run.lastLog?.level === 'warn') parts.push(`warning: ${run.lastLog.message}`);
    this.status.textContent = parts.join(' · ');
    this.status.classList.toggle('error', run.failure !== null && !cancelled);
    const buttons: HTMLElement[] = [];
    if (isLive) {
      const act = (action: 'pause' | 'resume' | 'stop', label: string): HTMLElement =>
        h(
          'button',
          {
            attrs: { type: 'button' },
            on: {
              click: () =>
                this.ctx.host.post({
                  type: 'train/control',
                  runDir: run.summary.runDir,
                  action,
                } satisfies FromWebview),
            },
          },
          label,
        );
      buttons.push(s.status === 'training' ? act('pause', 'Pause') : act('resume', 'Resume'), act('stop', 'Stop'));
    } else if (this.ctx.host.interactive && resumable(shown.status, shown.step, s.totalSteps)) {
      // A stopped or interrupted run goes on from its last checkpoint (the host's Resume).
      buttons.push(
        h(
          'button',
          {
            attrs: { type: 'button' },
            on: {
              click: () =>
                this.ctx.host.post({
                  type: 'train/control',
                  runDir: run.summary.runDir,
                  action: 'resume',
                } satisfies FromWebview),
            },
          },
          'Resume',
        ),
      );
    }
    replaceChildren(this.controls, ...buttons);
  }
}

/** Whether a run that is not training can go on from a checkpoint toward its planned steps. */
function resumable(status: string, step: number, totalSteps: number): boolean {
  return (status === 'stopped' || status === 'interrupted') && step > 0 && step < totalSteps;
}

/**
 * How an imported model that has not trained here reads: "imported · Hugging Face GPT-2 ·
 * 124M parameters · not trained here" — no step counter and no training state, which it
 * never had. Null for any other run (or once it was fine-tuned, or while it trains).
 */
function importedParts(s: RunSummary, step: number, live: boolean): string[] | null {
  if (!s.imported || step > 0 || live || s.status === 'failed') return null;
  return [
    'imported',
    s.imported.layout,
    ...(s.model ? [`${formatCompact(s.model.params)} parameters`] : []),
    'not trained here',
  ];
}
