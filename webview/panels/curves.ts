/**
 * Training curves with uPlot: train loss (raw and smoothed) and validation loss against step,
 * tokens seen or wall time, on a linear or log scale, plus learning rate, gradient norm and
 * tokens/s; other runs can be overlaid (their x values joined with uPlot.join). Charts are
 * rebuilt only when their structure changes (theme, runs, toggles); a live step only calls
 * setData. Long runs are decimated to about three points per pixel (min/max per bucket, so
 * spikes stay visible), and when one redraw still costs more than a few milliseconds the next
 * live redraw waits proportionally longer, so streaming never starves input. The loss chart's
 * data-points attribute counts the logged steps it represents; data-drawn-rows what it drew.
 * A run extended with more steps gets a dashed vertical marker where each new schedule segment
 * begins, labelled on the loss chart ("segment 2: +500 steps, warm restart") and drawn on the
 * learning-rate chart; markers are elements over the plot, placed after every redraw. The same
 * mechanism marks, on the loss chart, the first step where any head's score reached the Heads
 * tab's threshold ("induction ≥ 0.5 · L2H3 · step 840"; headHistory.ts finds it). A run of the
 * modular-addition task also gets the Grokking view below the small charts (grokking.ts).
 *
 * Leaves out: one chart's drawing and export menu (chart.ts), the columns and smoothing math
 * (series.ts, stepColumns.ts), where markers go (segments.ts).
 */

import uPlot from 'uplot';
import { h, replaceChildren } from '../base/dom';
import {
  MISSING,
  formatBitsPerByte,
  formatBleu,
  formatCompact,
  formatLoss,
  formatNumber,
  formatPercent,
  formatPerplexity,
} from '../../src/common/format';
import { csvItem } from '../export/exportMenu';
import type { ExportItem } from '../export/exportMenu';
import { exportFileName, runsMetricsCsv } from '../export/exportData';
import { Chart } from './chart';
import type { RunEntry, StoreEvent } from '../store';
import {
  bitsPerByteColumn,
  countFinite,
  decimateRows,
  evalRows,
  finiteRange,
  gather,
  gatherSparse,
  smoothEma,
  stepRows,
  xColumnName,
} from '../charts/series';
import type { Panel, PanelContext } from './panel';
import { curvesToolbar } from './curvesToolbar';
import { comparedRun, configDiffTable } from './configDiffTable';
import { evaluationsTable } from './evaluationsTable';
import { segmentMarkers, stepMarker } from '../charts/segments';
import { crossingLabel, firstCrossing } from '../charts/headHistory';
import type { SegmentMarker } from '../charts/segments';
import { GrokkingView } from './grokking';

type Table = uPlot.AlignedData;

/** How a hovered value of each quantity reads (one formatter per kind, src/common/format.ts). */
type Quantity = 'loss' | 'lr' | 'gradNorm' | 'tokensPerSec';
const HOVER: Readonly<Record<Quantity, (v: number) => string>> = {
  loss: formatLoss,
  lr: (v) => formatNumber(v, 6),
  gradNorm: (v) => formatNumber(v, 3),
  tokensPerSec: (v) => formatCompact(v),
};
/**
 * What the evaluated curve is: held-out validation, or — when the data was too small to hold
 * any out (the run's data summary says so) — the loss on training windows, never passed off
 * as validation.
 */
export function evalLabel(run: RunEntry): string {
  return run.summary.data?.validation?.kind === 'none' ? 'training loss (nothing held out)' : 'validation';
}

function line(
  label: string,
  stroke: string,
  width: number,
  q: Quantity,
  extra: Partial<uPlot.Series> = {},
): uPlot.Series {
  return {
    label,
    stroke,
    width,
    points: { show: false },
    value: (_u, v) => (v == null ? MISSING : HOVER[q](v)),
    ...extra,
  };
}

/** What the bits-per-byte axis leaves out: runs logged before steps recorded their bytes. */
function noBytesNote(runs: readonly RunEntry[]): string {
  const without = runs
    .filter((r) => r.steps.length > 0 && !Number.isFinite(r.steps.at('bytes', r.steps.length - 1)))
    .map((r) => r.summary.name);
  return without.length
    ? `No bits per byte for ${without.join(', ')}: trained before byte counts were logged (its ` +
        `evaluations still have them).`
    : '';
}

/** The training-curves tab. */
export class CurvesPanel implements Panel {
  readonly id = 'curves' as const;
  readonly label = 'Training curves';
  readonly el: HTMLElement;
  private readonly toolbar: HTMLElement;
  private readonly summary = h('p', { className: 'curves-summary', attrs: { 'aria-live': 'polite' } });
  private readonly note = h('p', { className: 'note', attrs: { hidden: true } });
  /** What differs between the compared runs' settings (only while comparing). */
  private readonly diff = h('div', { className: 'config-diff-box' });
  private diffKey = '';
  private readonly loss: Chart;
  private readonly small: { readonly lr: Chart; readonly grad: Chart; readonly tps: Chart };
  /** The modular-addition task's progress measures (hidden for other runs). */
  private readonly grokking: GrokkingView;
  private smoothBuf = new Float64Array(0);
  private lastCost = 0;
  private lastDraw = 0;
  private pending = false;

  constructor(private readonly ctx: PanelContext) {
    const csv = (): readonly ExportItem[] => [
      csvItem(
        'Save metrics as CSV',
        () => this.csvName(),
        () => runsMetricsCsv(this.shownRuns()),
      ),
    ];
    this.loss = new Chart('Loss against training progress', 'chart-main', ctx, csv);
    this.small = {
      lr: new Chart('Learning rate', 'chart-small', ctx, csv),
      grad: new Chart('Gradient norm', 'chart-small', ctx, csv),
      tps: new Chart('Tokens per second', 'chart-small', ctx, csv),
    };
    this.grokking = new GrokkingView(ctx);
    this.toolbar = h('div', { className: 'toolbar', attrs: { role: 'toolbar', 'aria-label': 'Chart options' } });
    this.el = h(
      'section',
      { className: 'panel curves' },
      this.toolbar,
      this.note,
      this.loss.box,
      h('div', { className: 'chart-row' }, this.small.lr.box, this.small.grad.box, this.small.tps.box),
      this.grokking.el,
      this.summary,
      this.diff,
    );
  }

  /** The selected run and the runs compared with it, as the charts show them. */
  private shownRuns(): RunEntry[] {
    const run = this.ctx.run();
    if (!run) return [];
    return [
      run,
      ...this.ctx.ui.curves.compare
        .map((id) => this.ctx.store.run(id))
        .filter((r): r is RunEntry => r !== undefined && r.id !== run.id),
    ];
  }

  private csvName(): string {
    const runs = this.shownRuns();
    return exportFileName(runs.map((r) => r.summary.name).join('+') || 'run', 'metrics', null, 'csv');
  }

  wants(ev: StoreEvent): boolean {
    return (
      ev.kind === 'runs' ||
      (ev.kind === 'run' &&
        (['steps', 'evals', 'evaluations', 'status', 'snapshots'] as const).some((p) => ev.parts.includes(p)))
    );
  }

  render(full: boolean): void {
    const run = this.ctx.run();
    if (full) replaceChildren(this.toolbar, ...curvesToolbar(this.ctx, () => this.render(true)));
    if (!run) {
      this.summary.textContent = 'No run selected.';
      this.grokking.clear();
      return;
    }
    // Adaptive throttle for live updates: after a redraw that cost c ms (script plus the
    // browser's layout and paint of that frame), wait 3c before the next, so live charts take
    // at most about a quarter of the main thread and input is never starved.
    const now = performance.now();
    const wait = 3 * this.lastCost - (now - this.lastDraw);
    if (!full && wait > 0) {
      if (!this.pending) {
        this.pending = true;
        setTimeout(() => {
          this.pending = false;
          this.ctx.invalidate('curves');
        }, wait);
      }
      return;
    }
    const t0 = performance.now();
    this.draw(run);
    this.lastDraw = performance.now();
    this.lastCost = this.lastDraw - t0;
    // A task queued now runs after this frame's rendering: its start measures script + render.
    setTimeout(() => {
      this.lastCost = Math.max(this.lastCost, performance.now() - t0);
    }, 0);
  }

  /** The training loss of `r` in the chosen unit: nats per token as logged, or bits per byte. */
  private trainLoss(r: RunEntry): Float64Array {
    const loss = r.steps.column('loss');
    return this.ctx.ui.curves.per === 'byte'
      ? bitsPerByteColumn(loss, r.steps.column('tokens'), r.steps.column('bytes'))
      : loss;
  }

  /**
   * One run's loss table [x, raw?, smoothed, validation, evaluations?] in the chosen unit,
   * decimated to about `buckets` columns; `withMarks` adds the run's evaluations on test data
   * at their steps (the marks on the validation curve).
   */
  private lossTable(
    r: RunEntry,
    buckets: number,
    withRaw: boolean,
    withMarks: boolean,
  ): { table: Table; drawn: number } {
    const ui = this.ctx.ui.curves;
    const perByte = ui.per === 'byte';
    const n = r.steps.length;
    if (this.smoothBuf.length < n) this.smoothBuf = new Float64Array(Math.max(n, this.smoothBuf.length * 2, 1024));
    const raw = this.trainLoss(r);
    const smooth = smoothEma(raw, ui.smoothing, this.smoothBuf).subarray(0, n);
    const val = stepRows(r.steps, r.evals, (e) => (perByte ? e.bpb : e.loss));
    const marks = withMarks ? stepRows(r.steps, r.evaluations, (e) => (perByte ? e.bpb : e.loss)) : null;
    const rows = decimateRows(raw, buckets, [...val.keys(), ...(marks?.keys() ?? [])]);
    const x = r.steps.column(xColumnName(ui.x));
    const cols: Table[number][] =
      rows.length === n
        ? [x, ...(withRaw ? [raw] : []), smooth]
        : [gather(x, rows), ...(withRaw ? [gather(raw, rows)] : []), gather(smooth, rows)];
    // Copy the smoothed view: smoothBuf is reused by the next run's table.
    if (rows.length === n) cols[cols.length - 1] = Float64Array.from(smooth);
    cols.push(gatherSparse(val, rows));
    if (marks) cols.push(gatherSparse(marks, rows));
    return { table: cols as Table, drawn: rows.length };
  }

  private draw(run: RunEntry): void {
    const ui = this.ctx.ui.curves;
    const theme = this.ctx.theme;
    const others = ui.compare
      .map((id) => this.ctx.store.run(id))
      .filter((r): r is RunEntry => r !== undefined && r.id !== run.id);
    const xName = xColumnName(ui.x);
    const colors = theme.series;
    const c0 = colors[0] ?? theme.text;
    const c1 = colors[1] ?? theme.text;
    const width = Math.max(320, Math.floor(this.el.clientWidth || 800) - 8);
    // About one bucket per horizontal pixel: ≤ 3 drawn points per pixel whatever the run length.
    const buckets = Math.max(100, width - 60);
    let lossSeries: uPlot.Series[] = [
      // Raw loss under its smoothed curve: a quieter, still readable shade of the run's colour; without smoothing, the
      // colour itself.
      line(`${run.summary.name} train`, ui.smoothing > 0 ? theme.secondary : c0, 1, 'loss'),
      line(`${run.summary.name} train (smoothed)`, c0, 2, 'loss', { show: ui.smoothing > 0 }),
      line(`${run.summary.name} ${evalLabel(run)}`, c1, 2, 'loss', {
        spanGaps: true,
        points: { show: true, size: 6, fill: c1 },
      }),
    ];
    // Evaluations on test data: rings at their steps, in the foreground colour, no line.
    const marked = run.evaluations.length > 0;
    if (marked)
      lossSeries.push(
        line(`${run.summary.name} evaluated on test data`, theme.text, 2, 'loss', {
          paths: () => null,
          points: {
            show: true,
            size: 11,
            width: 2,
            stroke: theme.text,
            fill: `rgb(${theme.bg[0]}, ${theme.bg[1]}, ${theme.bg[2]})`,
          },
        }),
      );
    const main = this.lossTable(run, buckets, true, marked);
    const markers = segmentMarkers(run.summary.segments, run.steps, ui.x);
    const threshold = this.thresholdMarker(run);
    const tables: Table[] = [main.table];
    others.forEach((o, i) => {
      const c = colors[(i + 2) % colors.length] ?? theme.text;
      tables.push(this.lossTable(o, buckets, false, false).table);
      lossSeries = lossSeries.concat([
        line(`${o.summary.name} train (smoothed)`, c, 2, 'loss'),
        line(`${o.summary.name} ${evalLabel(o)}`, c, 1.5, 'loss', {
          dash: [6, 4],
          spanGaps: true,
          points: { show: true, size: 5, fill: c },
        }),
      ]);
    });
    const lossData = tables.length === 1 ? (tables[0] as Table) : uPlot.join(tables);
    const raw = this.trainLoss(run);
    const canLog = ui.log && (finiteRange(raw)?.min ?? 1) > 0;
    const notes = [
      canLog || !ui.log ? '' : 'Log scale is off: some losses are not positive.',
      ui.per === 'byte' ? noBytesNote([run, ...others]) : '',
    ].filter((t) => t !== '');
    this.note.hidden = notes.length === 0;
    this.note.textContent = notes.join(' ');
    const key =
      `${ui.x}|${ui.per}|${marked}|${canLog}|${ui.smoothing > 0}|` +
      `${[run.id, ...others.map((o) => o.id)].join(',')}`;
    const yLabel = ui.per === 'byte' ? 'bits per byte' : 'nats per token';
    this.loss.update(
      {
        key,
        title: 'Loss',
        yLabel,
        height: 300,
        log: canLog,
        series: lossSeries,
        data: lossData,
        markers: threshold ? [...markers, threshold] : markers,
        markerLabels: true,
      },
      this.ctx,
      width,
      ui.x,
    );
    this.loss.box.dataset.points = String(countFinite(raw));
    this.loss.box.dataset.valPoints = String(evalRows(run.steps, run.evals).size);
    this.loss.box.dataset.evaluationMarks = String(stepRows(run.steps, run.evaluations, (e) => e.loss).size);
    this.loss.box.dataset.unit = ui.per;
    this.loss.box.dataset.drawnRows = String(main.drawn);
    const smallWidth = Math.max(240, Math.floor((width - 16) / 3));
    const metric = (
      chart: Chart,
      col: 'lr' | 'gradNorm' | 'tokensPerSec',
      title: string,
      log: boolean,
      marked: readonly SegmentMarker[] = [],
    ): void => {
      const runs = [run, ...others];
      const small = runs.map((r): Table => {
        const y = r.steps.column(col);
        const rows = decimateRows(y, Math.max(50, smallWidth - 50));
        return rows.length === y.length
          ? [r.steps.column(xName), y]
          : [gather(r.steps.column(xName), rows), gather(y, rows)];
      });
      const data = small.length === 1 ? (small[0] as Table) : uPlot.join(small);
      const series = runs.map((r, i) =>
        line(r.summary.name, colors[i === 0 ? 0 : (i + 1) % colors.length] ?? theme.text, 1.5, col),
      );
      const positive = (finiteRange(run.steps.column(col))?.min ?? 1) > 0;
      chart.update(
        { key: `${key}|${log && positive}`, title, height: 170, log: log && positive, series, data, markers: marked },
        this.ctx,
        smallWidth,
        ui.x,
      );
    };
    metric(this.small.lr, 'lr', 'Learning rate', false, markers);
    metric(this.small.grad, 'gradNorm', 'Gradient norm', ui.log);
    metric(this.small.tps, 'tokensPerSec', 'Tokens / s', false);
    this.grokking.update(run, width);
    this.summarize(run);
    const compared = [run, ...others];
    const diffKey = compared
      .map(
        (r) =>
          `${r.id}:${r.summary.name}:${r.summary.totalSteps}:` +
          `${r.summary.model?.backend ?? ''}:${r.evaluations.length}:` +
          `${r.evals.length}`,
      )
      .join('|');
    if (diffKey !== this.diffKey) {
      this.diffKey = diffKey;
      replaceChildren(
        this.diff,
        ...configDiffTable(compared.map(comparedRun)),
        ...evaluationsTable(run.summary.name, run.evaluations),
      );
    }
  }

  /**
   * The first step where any head's chosen score reached the Heads tab's threshold
   * ("induction ≥ 0.5 · L2H3 · step 840"), as a marker; null when off or never reached.
   */
  private thresholdMarker(run: RunEntry): SegmentMarker | null {
    const h = this.ctx.ui.heads;
    if (!h.mark) return null;
    const c = firstCrossing(run.heads, h.stack, h.score, h.threshold);
    return c
      ? stepMarker(
          c.step,
          crossingLabel(h.score, formatNumber(h.threshold), c),
          run.steps,
          this.ctx.ui.curves.x,
          'threshold',
        )
      : null;
  }

  private summarize(run: RunEntry): void {
    const n = run.steps.length;
    const last = run.evals[run.evals.length - 1];
    const parts = [`${n} steps logged`];
    if (n > 0)
      parts.push(
        `step ${run.steps.lastStep}: loss ${formatLoss(run.steps.at('loss', n - 1))}, lr ` +
          `${formatNumber(run.steps.at('lr', n - 1))}, ${formatCompact(run.steps.at('tokensPerSec', n - 1))} tokens/s`,
      );
    if (last) {
      parts.push(
        `${evalLabel(run)} at step ${last.step}: loss ${formatLoss(last.loss)}` +
          `, perplexity ${formatPerplexity(last.ppl)}` +
          `${last.bpb != null ? `, ${formatBitsPerByte(last.bpb)} bits/byte` : ''}`,
      );
      if (last.exactMatch !== null) parts.push(`exact match ${formatPercent(last.exactMatch)}`);
      if (last.bleu !== null) parts.push(`BLEU ${formatBleu(last.bleu)}`);
    }
    this.summary.textContent = parts.join(' · ');
  }

  hide(): void {
    // uPlot keeps listeners on window; charts are cheap to rebuild when the tab returns.
    this.loss.destroy();
    for (const c of Object.values(this.small)) c.destroy();
  }
}
