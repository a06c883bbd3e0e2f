/**
 * The Heads tab: what each head learned, over training. For every stack (decoder self-,
 * encoder self-, cross-attention) a grid of layer × head, each head with a sparkline per score
 * (previous token, first token, diagonal, induction, entropy; diagonal, anti-diagonal and
 * entropy for cross-attention) over the snapshots' steps and the value at the selected step.
 * A score and threshold (default induction ≥ 0.5) rank or filter the heads and give the loss
 * curve its marker (the first step any head reaches it; panels/curves.ts draws it). The
 * timeline is the attention tab's: both show the same step, and opening a head (click, or
 * Enter) shows its heatmap there. Hovering a sparkline tells the exact value and step. With
 * "Your text" chosen in the bar (inspectBar.ts) it shows the scores of the model now on that
 * text instead, one value per head — for any run, imported ones included.
 *
 * Leaves out: the grids (headsGrid.ts), the drawing (sparkline.ts), the data (headHistory.ts)
 * and the CSV of the table (exportData.ts; its menu sits in the toolbar's export slot).
 */

import { formatNumber } from '../../src/common/format';
import type { AttentionStack } from '../../src/protocol/model';
import { STACK_LABELS } from '../heatmap/attentionMath';
import { h, replaceChildren } from '../base/dom';
import { exportFileName, runHeadScoresCsv } from '../export/exportData';
import { csvItem, exportMenu } from '../export/exportMenu';
import type { HeadHistory, ScoreName } from '../charts/headHistory';
import { SCORE_LABELS, STACK_SCORES, crossingLabel, firstCrossing, headName, isFraction } from '../charts/headHistory';
import type { StoreEvent } from '../store';
import { InspectBar, inspectView } from './inspectBar';
import { HeadsGrid } from './headsGrid';
import { headLabel } from '../../src/common/architecture';
import type { Panel, PanelContext } from './panel';

/**
 * The chart colour (index into theme.series) of each score, the same in every stack; entropy (nats, not a weight) in
 * the text colour.
 */
const COLOR: { readonly [K in ScoreName]: number | 'text' } = {
  previousToken: 0,
  firstToken: 1,
  diagonal: 2,
  induction: 3,
  entropy: 'text',
  antiDiagonal: 4,
};

/** The Heads tab. */
export class HeadsPanel implements Panel {
  readonly id = 'heads' as const;
  readonly label = 'Heads';
  readonly el: HTMLElement;
  private readonly scoreSel = h('select', {
    attrs: { id: 'heads-score', 'aria-label': 'Score that ranks, filters and marks heads' },
  });
  private readonly threshold = h('input', {
    attrs: { id: 'heads-threshold', type: 'number', step: 0.05, 'aria-label': 'Threshold' },
  });
  private readonly only = h('input', { attrs: { id: 'heads-only', type: 'checkbox' } });
  private readonly orderSel = h(
    'select',
    { attrs: { id: 'heads-order', 'aria-label': 'Arrangement' } },
    h('option', { attrs: { value: 'grid' } }, 'layer × head'),
    h('option', { attrs: { value: 'ranked' } }, 'ranked, highest first'),
  );
  private readonly mark = h('input', { attrs: { id: 'heads-mark', type: 'checkbox' } });
  private readonly count = h('output', { className: 'heads-count', attrs: { 'aria-live': 'polite' } });
  /** Where an "Export CSV" of the head-score table goes (the export menu fills it). */
  readonly exportSlot = h('span', { className: 'toolbar-slot heads-export', attrs: { 'data-slot': 'export' } });
  private readonly slider = h('input', {
    attrs: {
      type: 'range',
      id: 'heads-timeline',
      min: 0,
      max: 0,
      step: 1,
      value: 0,
      'aria-label': 'Snapshot (training step)',
    },
  });
  private readonly stepLabel = h('output', { className: 'heads-step', attrs: { for: 'heads-timeline' } });
  private readonly note = h('p', { className: 'note heads-note' });
  private readonly crossing = h('p', { className: 'heads-crossing' });
  private readonly empty = h('p', { className: 'empty' });
  private readonly tip = h('div', { className: 'heads-tip', attrs: { role: 'status' } });
  private readonly stacksBox = h('div', { className: 'heads-stacks' });
  private readonly body: HTMLElement;
  private readonly bar: InspectBar;
  private readonly timelineBox: HTMLElement;
  private grids = new Map<AttentionStack, HeadsGrid>();

  constructor(private readonly ctx: PanelContext) {
    this.exportSlot.append(
      exportMenu(
        ctx.host,
        'Export head scores',
        () => {
          const run = ctx.run();
          return run && run.heads.length > 0
            ? [
                csvItem(
                  'Save head scores as CSV',
                  () => exportFileName(run.summary.name, 'head-scores', null, 'csv'),
                  () => runHeadScoresCsv(run),
                ),
              ]
            : [];
        },
        (t) => ctx.problem(t),
      ),
    );
    const ui = ctx.ui.heads;
    const changed = (full = false): void => {
      ctx.saveUi();
      ctx.invalidate('heads', full);
      ctx.invalidate('curves', true);
    };
    this.scoreSel.addEventListener('change', () => {
      const [stack, score] = this.scoreSel.value.split('|') as [AttentionStack, ScoreName];
      ui.stack = stack;
      ui.score = score;
      if (isFraction(score) && (ui.threshold < 0 || ui.threshold > 1)) ui.threshold = 0.5;
      changed();
    });
    this.threshold.addEventListener('change', () => {
      const v = Number(this.threshold.value);
      if (this.threshold.value.trim() === '' || !Number.isFinite(v)) {
        this.threshold.value = String(ui.threshold);
        return;
      }
      ui.threshold = v;
      changed();
    });
    this.only.addEventListener('change', () => {
      ui.only = this.only.checked;
      changed();
    });
    this.orderSel.addEventListener('change', () => {
      ui.order = this.orderSel.value === 'ranked' ? 'ranked' : 'grid';
      changed();
    });
    this.mark.addEventListener('change', () => {
      ui.mark = this.mark.checked;
      changed();
    });
    this.slider.addEventListener('input', () => {
      const n = ctx.run()?.snapshots.length ?? 0;
      const i = Number(this.slider.value);
      ctx.ui.attention.snapshot = i >= n - 1 ? -1 : i;
      ctx.saveUi();
      ctx.invalidate('heads');
    });
    const toolbar = h(
      'div',
      { className: 'toolbar', attrs: { role: 'toolbar', 'aria-label': 'Head score options' } },
      h('label', { attrs: { for: 'heads-score' } }, 'score '),
      this.scoreSel,
      h('label', { attrs: { for: 'heads-threshold' } }, '≥ '),
      this.threshold,
      h(
        'span',
        { className: 'toolbar-item' },
        this.only,
        h('label', { attrs: { for: 'heads-only' } }, ' only heads at or above it'),
      ),
      h('label', { attrs: { for: 'heads-order' } }, 'arrange '),
      this.orderSel,
      h(
        'span',
        { className: 'toolbar-item' },
        this.mark,
        h('label', { attrs: { for: 'heads-mark' } }, ' mark the first crossing on the loss curve'),
      ),
      this.count,
      this.exportSlot,
    );
    this.timelineBox = h('div', { className: 'timeline' }, this.slider, this.stepLabel);
    this.body = h(
      'div',
      { className: 'heads-main' },
      toolbar,
      this.timelineBox,
      this.crossing,
      this.note,
      this.stacksBox,
    );
    this.bar = new InspectBar(ctx, 'heads');
    this.el = h('section', { className: 'panel heads' }, this.bar.el, this.empty, this.body, this.tip);
    this.tip.hidden = true;
  }

  wants(ev: StoreEvent): boolean {
    return (
      ev.kind === 'runs' || (ev.kind === 'run' && (ev.parts.includes('snapshots') || ev.parts.includes('inspection')))
    );
  }

  render(full: boolean): void {
    const t0 = performance.now();
    const run = this.ctx.run();
    this.bar.render(run);
    const text = inspectView(this.ctx, run) === 'text';
    const hist = text ? (run?.inspection?.heads ?? undefined) : run?.heads;
    const present = hist?.present() ?? [];
    this.timelineBox.hidden = text;
    this.body.hidden = present.length === 0 || hist === undefined || hist.length === 0;
    this.empty.hidden = !this.body.hidden;
    if (!run || !hist || this.body.hidden) {
      this.empty.textContent = !run
        ? 'No run selected.'
        : text
          ? run.inspection
            ? ''
            : "Type a text above and press Show: every head's scores on it (induction on the run's " +
              'diagnostic sequences).'
          : run.snapshots.length > 0
            ? 'These snapshots carry no head scores (they were recorded before head scores ' +
              'existed); choose "Your text" to measure them now.'
            : 'No head scores yet: they are computed at every attention snapshot (every --snapshot-every steps).';
      this.empty.hidden = this.empty.textContent === '';
      replaceChildren(this.stacksBox);
      this.grids.clear();
      this.count.textContent = '';
      return;
    }
    const ui = this.ctx.ui.heads;
    if (!present.some((s) => s.stack === ui.stack && STACK_SCORES[s.stack].includes(ui.score))) {
      const withScore = present.find((s) => STACK_SCORES[s.stack].includes(ui.score)) ?? present[0];
      if (withScore) {
        ui.stack = withScore.stack;
        if (!STACK_SCORES[ui.stack].includes(ui.score)) ui.score = STACK_SCORES[ui.stack][0] as ScoreName;
      }
    }
    if (
      full ||
      this.scoreSel.options.length === 0 ||
      this.scoreSel.dataset.stacks !== present.map((s) => s.stack).join()
    )
      this.buildScores(present.map((s) => s.stack));
    this.scoreSel.value = `${ui.stack}|${ui.score}`;
    this.threshold.value = String(ui.threshold);
    this.only.checked = ui.only;
    this.orderSel.value = ui.order;
    this.mark.checked = ui.mark;
    const row = text ? 0 : this.timeline(run.snapshots, hist);
    this.note.textContent = measuredOn(hist, run.summary.kind === 'encoder-decoder');
    const c = firstCrossing(hist, ui.stack, ui.score, ui.threshold);
    this.crossing.textContent = c
      ? `First crossing: ${crossingLabel(ui.score, formatNumber(ui.threshold), c)} ` +
        `(${SCORE_LABELS[ui.score].full} ${formatNumber(c.value, 3)}).`
      : `No ${STACK_LABELS[ui.stack].toLowerCase()} head has reached ${SCORE_LABELS[ui.score].full} ` +
        `≥ ${formatNumber(ui.threshold)} yet.`;
    const theme = this.ctx.theme;
    const colors = new Map<ScoreName, string>(
      (Object.keys(COLOR) as ScoreName[]).map((k) => {
        const c = COLOR[k];
        return [k, c === 'text' ? theme.text : (theme.series[c % theme.series.length] ?? theme.text)];
      }),
    );
    const keep = new Map<AttentionStack, HeadsGrid>();
    let shown = 0;
    let total = 0;
    for (const s of present) {
      const grid = this.grids.get(s.stack) ?? this.newGrid(s.stack);
      keep.set(s.stack, grid);
      const visible = grid.render(
        {
          series: s,
          row,
          steps: hist.steps,
          ranges: ranges(s.stack, hist),
          colors,
          chosen: s.stack === ui.stack ? ui.score : null,
          threshold: ui.threshold,
          only: ui.only,
          ranked: ui.order === 'ranked',
          headName: (j) => headLabel(j, run.summary.model?.config),
        },
        theme,
      );
      if (s.stack === ui.stack) {
        shown = visible;
        total = s.layers * s.heads;
      }
    }
    if (
      full ||
      keep.size !== this.grids.size ||
      [...keep.keys()].some((k, i) => this.stacksBox.children[i] !== keep.get(k)?.el)
    ) {
      replaceChildren(this.stacksBox, ...[...keep.values()].map((g) => g.el));
      for (const g of keep.values()) g.wrap(); // now that the grids have the panel's width
    }
    this.grids = keep;
    const above = this.stacksBox.querySelectorAll(`[data-stack="${ui.stack}"] .heads-cell.above`).length;
    this.count.textContent =
      `${above} of ${total} ${STACK_LABELS[ui.stack].toLowerCase()} heads ≥ ` +
      `${formatNumber(ui.threshold)}${ui.only ? ` (showing ${shown})` : ''}`;
    this.el.dataset.drawMs = (performance.now() - t0).toFixed(2);
  }

  /** Sets the slider over the run's snapshots (the attention tab's timeline); returns the history row it selects. */
  private timeline(snaps: readonly { step: number }[], hist: HeadHistory): number {
    const n = snaps.length;
    const sel = this.ctx.ui.attention.snapshot;
    const idx = sel < 0 || sel >= n ? n - 1 : sel;
    const step = snaps[idx]?.step ?? (hist.steps[hist.length - 1] as number);
    this.slider.max = String(Math.max(0, n - 1));
    this.slider.value = String(Math.max(0, idx));
    this.slider.disabled = n < 2;
    this.slider.setAttribute('aria-valuetext', `step ${step}`);
    const row = sel < 0 ? hist.length - 1 : hist.rowAt(step);
    this.stepLabel.textContent = `step ${step} · snapshot ${idx + 1} of ${n}${sel < 0 ? ' (latest)' : ''}`;
    return row;
  }

  private buildScores(stacks: readonly AttentionStack[]): void {
    this.scoreSel.dataset.stacks = stacks.join();
    replaceChildren(
      this.scoreSel,
      ...stacks.map((stack) =>
        h(
          'optgroup',
          { attrs: { label: STACK_LABELS[stack] } },
          ...STACK_SCORES[stack].map((score) =>
            h('option', { attrs: { value: `${stack}|${score}` } }, SCORE_LABELS[score].full),
          ),
        ),
      ),
    );
  }

  private newGrid(stack: AttentionStack): HeadsGrid {
    const g = new HeadsGrid(stack);
    g.onOpen = (layer, head, row) => this.open(stack, layer, head, row);
    g.onHover = (hit) => {
      const run = this.ctx.run();
      const hist = inspectView(this.ctx, run) === 'text' ? run?.inspection?.heads : run?.heads;
      const s = hist?.stacks.get(stack);
      if (!hit || !hist || !s) {
        this.tip.hidden = true;
        return;
      }
      const v = s.column(hit.score, hit.layer, hit.head)[hit.row];
      const value = v === undefined || !Number.isFinite(v) ? 'not measured' : formatNumber(v, 4);
      this.tip.textContent =
        `${headName(hit.layer, hit.head)} ${SCORE_LABELS[hit.score].full} ` +
        `${value} ` +
        `${inspectView(this.ctx, run) === 'text' ? 'on your text' : `at step ${hist.steps[hit.row]}`}`;
      this.tip.hidden = false;
      // CSSOM, not a style attribute: the page's CSP allows none.
      this.tip.style.left = `${Math.min(hit.x + 12, window.innerWidth - this.tip.offsetWidth - 8)}px`;
      this.tip.style.top = `${hit.y + 14}px`;
    };
    this.grids.set(stack, g);
    return g;
  }

  /** Shows the head's heatmap on the attention tab, at the history row `row` (else the selected step). */
  private open(stack: AttentionStack, layer: number, head: number, row: number | null): void {
    const run = this.ctx.run();
    if (!run) return;
    const a = this.ctx.ui.attention;
    a.stack = stack;
    a.layer = layer;
    a.head = head;
    const step = row === null || inspectView(this.ctx, run) === 'text' ? null : run.heads.steps[row];
    if (step !== undefined && step !== null) {
      // The snapshot at that step, or the last one before it (a report may keep fewer maps than scores).
      let i = run.snapshots.length - 1;
      while (i > 0 && (run.snapshots[i] as { step: number }).step > step) i--;
      a.snapshot = i >= run.snapshots.length - 1 ? -1 : i;
    }
    this.tip.hidden = true;
    this.ctx.saveUi();
    this.ctx.show('attention');
  }

  hide(): void {
    this.tip.hidden = true;
  }
}

/** y range of each score's sparklines: 0–1 for fractions, 0 to the stack's largest entropy. */
function ranges(stack: AttentionStack, hist: HeadHistory): Map<ScoreName, { min: number; max: number }> {
  const out = new Map<ScoreName, { min: number; max: number }>();
  for (const score of STACK_SCORES[stack]) {
    if (isFraction(score)) {
      out.set(score, { min: 0, max: 1 });
      continue;
    }
    let max = 0;
    for (const c of hist.stacks.get(stack)?.values.get(score) ?? []) for (const v of c) if (v > max) max = v;
    out.set(score, { min: 0, max: max > 0 ? max : 1 });
  }
  return out;
}

/** Says what each score is measured on (the probe, a selected text, the diagnostic sequences). */
function measuredOn(hist: HeadHistory, encDec: boolean): string {
  const on = hist.selection ? 'your text' : "the run's probe sample (the same sequence at every snapshot)";
  const cross = encDec
    ? `; cross-attention diagonal and anti-diagonal on ` +
      `${hist.selection ? 'the text and the model’s greedy output for it' : 'the probe’s source → target pair'}`
    : '';
  return (
    `Previous token, first token, diagonal and entropy are measured on ${on}${cross}; ` +
    `induction on the run’s eight diagnostic sequences (seeded random tokens repeated twice, with ` +
    `different lengths and starts: the mean), which a text cannot stand in for. Values are mean ` +
    `attention weights (0–1); entropy is in nats.`
  );
}
